#include "kernels/ring.h"

namespace tpusim::kernels {

void MeetRingNeighbours(dsl::Kernel& k, const dsl::Ring& ring) {
  MeetRingNeighbours(k, ring, k.barrier_semaphore());
}

void MeetRingNeighbours(dsl::Kernel& k, const dsl::Ring& ring, const dsl::Ref& sem) {
  if (ring.size < 2) return;
  k.signal(sem, 1, ring.left_device());
  k.signal(sem, 1, ring.right_device());
  k.wait(sem, 2);
}

void MeetEveryoneOnRing(dsl::Kernel& k, const dsl::Ring& ring) {
  if (ring.size < 2) return;
  const dsl::Ref barrier = k.barrier_semaphore();
  for (int d = 1; d < ring.size; ++d)
    k.signal(barrier, 1, ring.device(ring.index_at(d)));
  k.wait(barrier, ring.size - 1);
}

}  // namespace tpusim::kernels
