#pragma once

// The DMA semaphores a DMA engine has checked (DmaDispatcher::Check). A chip never drops a
// semaphore it made, nor changes its kind (sim/semaphore.h), so one found once to exist and to
// count bytes does so for the rest of the run: the next DMA that names it needs neither the
// chip's deque nor the semaphore itself, each a cache miss or two on a pod (the receive
// semaphore lies on another chip). Only where a handle points is remembered; a handle whose
// chip does not fit the DMA still fails the check as before.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "sim/base_names.h"
#include "sim/semaphore.h"

namespace tpusim::sim {

class DmaSemaphoreCache {
 public:
  // A 3-D torus kernel uses a dozen or two per step (a ring's two, N-buffered): in sets of two
  // they seldom push each other out.
  static constexpr size_t kSets = 32;
  static constexpr size_t kEntries = 2 * kSets;

  // The set `h` belongs to. Neighbours' chips lie strides apart and their semaphores at the
  // same indices: a multiplicative hash spreads both over the sets.
  static size_t SetOf(SemaphoreHandle h) {
    return static_cast<size_t>((Key(h) * 0x9e3779b97f4a7c15u) >> 59);
  }

  // The semaphore `h` names when it was remembered, else null.
  Semaphore* Find(SemaphoreHandle h) {
    Set& set = sets_[SetOf(h)];
    const uint64_t key = Key(h);
    if (set.keys[0] == key) return set.semaphores[0];
    if (set.keys[1] != key) return nullptr;
    // Found second: it goes first, and the other is the one that leaves next.
    std::swap(set.keys[0], set.keys[1]);
    std::swap(set.semaphores[0], set.semaphores[1]);
    return set.semaphores[0];
  }
  // `s`, which `h` names, exists and is a DMA semaphore. It takes the place of the handle of
  // its set used longest ago.
  void Remember(SemaphoreHandle h, Semaphore& s) {
    Set& set = sets_[SetOf(h)];
    set.keys[1] = set.keys[0];
    set.semaphores[1] = set.semaphores[0];
    set.keys[0] = Key(h);
    set.semaphores[0] = &s;
  }

 private:
  // Both entries of a set on one cache line: a lookup reads one line.
  struct alignas(32) Set {
    uint64_t keys[2] = {~uint64_t{0}, ~uint64_t{0}};  // an empty entry's semaphore is null
    Semaphore* semaphores[2] = {nullptr, nullptr};
  };
  static uint64_t Key(SemaphoreHandle h) { return uint64_t{h.chip} << 32 | h.index; }
  static_assert(kSets == 32, "SetOf keeps the hash's top 5 bits");
  Set sets_[kSets];
};

}  // namespace tpusim::sim
