#pragma once

// What ring kernels share: the start barrier with both ring neighbours (or the whole ring).

#include <string>

#include "dsl/kernel.h"

namespace tpusim::kernels {

// A DMA or signal into a device that has not entered the kernel yet is unsafe
// (docs/references.md §5), so every device first meets its left and right neighbours on
// the ring through the barrier semaphore. A no-op on a ring of one.
void MeetRingNeighbours(dsl::Kernel& k, const dsl::Ring& ring);
// The same through `sem` (a REGULAR semaphore): meeting again later in the kernel, e.g.
// between two stages, when the barrier semaphore's count is already spent.
void MeetRingNeighbours(dsl::Kernel& k, const dsl::Ring& ring, const dsl::Ref& sem);
// The ring a mesh axis forms (Kernel::ring).
inline void MeetRingNeighbours(dsl::Kernel& k, const std::string& axis) {
  MeetRingNeighbours(k, k.ring(axis));
}

// Ring steps take turns on kStepSemaphores semaphores per direction and role (send, receive):
// step s uses entry s % kStepSemaphores (RingStepSemaphore), so a device's semaphores do not
// grow with the ring (one per step, an N-chip ring would hold N^2 of them in host memory).
// Consecutive steps use different entries, so a fast neighbour's next shard is never counted
// as this step's; a shard two steps ahead comes from the same neighbour over the same links
// after the one before it, so it lands after it.
constexpr int kStepSemaphores = 2;
inline dsl::Ref RingStepSemaphore(const dsl::Ref& sems, int step) {
  return sems.at(step % kStepSemaphores);
}
// The same, sliced once before a kernel's step loop: each step then picks its entry without
// making a view (a view is a heap block, and a ring of N chips takes N-1 steps on each).
class RingStepSemaphores {
 public:
  explicit RingStepSemaphores(const dsl::Ref& sems) {
    for (int i = 0; i < kStepSemaphores; ++i)
      entries_[i] = RingStepSemaphore(sems, i);
  }
  const dsl::Ref& operator[](int step) const { return entries_[step % kStepSemaphores]; }

 private:
  dsl::Ref entries_[kStepSemaphores];
};

// The same for kernels in which every device on the ring writes to every other
// (all-to-all): each device meets all of them.
void MeetEveryoneOnRing(dsl::Kernel& k, const dsl::Ring& ring);

}  // namespace tpusim::kernels
