#pragma once

// The DMA semaphores a DMA engine has checked (DmaDispatcher::Check). A chip never drops a
// semaphore it made, nor changes its kind (sim/semaphore.h), so one found once to exist and to
// count bytes does so for the rest of the run: the next DMA that names it needs neither the
// chip's deque nor the semaphore itself, each a cache miss or two on a pod (the receive
// semaphore lies on another chip). Only where a handle points is remembered; a handle whose
// chip does not fit the DMA still fails the check as before.

#include <cstddef>
#include <cstdint>

#include "sim/base_names.h"
#include "sim/semaphore.h"
#include "sim/two_way_sets.h"

namespace tpusim::sim {

class DmaSemaphoreCache {
 public:
  // A 3-D torus kernel uses a dozen or two per step (a ring's two, N-buffered): in sets of two
  // they seldom push each other out.
  static constexpr size_t kSets = 32;
  static constexpr size_t kEntries = 2 * kSets;

  // The set `h` belongs to. Neighbours' chips lie strides apart and their semaphores at the
  // same indices: the hash spreads both over the sets.
  static size_t SetOf(SemaphoreHandle h) { return Sets::SetOf(KeyOf(h).bits); }

  // The semaphore `h` names when it was remembered, else null.
  Semaphore* Find(SemaphoreHandle h) {
    Semaphore** found = sets_.Find(SetOf(h), KeyOf(h));
    return found ? *found : nullptr;
  }
  // `s`, which `h` names, exists and is a DMA semaphore. It takes the place of the handle of
  // its set used longest ago.
  void Remember(SemaphoreHandle h, Semaphore& s) { sets_.Remember(SetOf(h), KeyOf(h), &s); }

 private:
  struct Key {
    uint64_t bits = ~uint64_t{0};  // an empty entry's semaphore is null
    bool operator==(const Key&) const = default;
  };
  static Key KeyOf(SemaphoreHandle h) { return {uint64_t{h.chip} << 32 | h.index}; }
  // Both ways of a set on one cache line: a lookup reads one line.
  using Sets = TwoWaySets<Key, Semaphore*, kSets, WayLayout::kSetPerLine>;
  Sets sets_;
};

}  // namespace tpusim::sim
