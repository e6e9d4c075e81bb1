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

namespace tpusim::sim {

class DmaSemaphoreCache {
 public:
  // A 3-D torus kernel uses a dozen or two per step (a ring's two, N-buffered).
  static constexpr size_t kEntries = 64;

  // The semaphore `h` names when it was remembered, else null.
  Semaphore* Find(SemaphoreHandle h) const {
    const Entry& e = entries_[Slot(h)];
    return e.key == Key(h) ? e.semaphore : nullptr;
  }
  // `s`, which `h` names, exists and is a DMA semaphore. It takes the place of whatever
  // handle shared its entry.
  void Remember(SemaphoreHandle h, Semaphore& s) { entries_[Slot(h)] = {Key(h), &s}; }

 private:
  struct Entry {
    uint64_t key = ~uint64_t{0};  // an empty entry's semaphore is null, whatever asks
    Semaphore* semaphore = nullptr;
  };
  static uint64_t Key(SemaphoreHandle h) { return uint64_t{h.chip} << 32 | h.index; }
  // Neighbours' chips lie strides apart and their semaphores at the same indices: a
  // multiplicative hash spreads both over the entries.
  static size_t Slot(SemaphoreHandle h) {
    return static_cast<size_t>((Key(h) * 0x9e3779b97f4a7c15u) >> 58);
  }
  static_assert(kEntries == 64, "Slot keeps the hash's top 6 bits");
  Entry entries_[kEntries];
};

}  // namespace tpusim::sim
