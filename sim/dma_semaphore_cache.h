#pragma once

// The DMA semaphores a DMA engine has checked (DmaDispatcher::Check), by the pair a DMA names:
// its receive semaphore and its send one (none for a local copy). A chip never drops a
// semaphore it made, nor changes its kind (sim/semaphore.h), so a pair found once to exist and
// to count bytes does so for the rest of the run: the next DMA that names it needs neither the
// chips' tables nor the semaphores themselves, each a cache miss or two on a pod (the receive
// semaphore lies on another chip). Remembered by pair, a DMA's lookup reads one line where a
// lookup per semaphore read two. Only where the handles point is remembered; a handle whose
// chip does not fit the DMA still fails the check as before.

#include <bit>
#include <cstddef>
#include <cstdint>

#include "sim/base_names.h"
#include "sim/semaphore.h"
#include "sim/two_way_sets.h"

namespace tpusim::sim {

class DmaSemaphoreCache {
 public:
  // A 3-D torus kernel uses a dozen or two pairs per step (a ring's, N-buffered): in sets of
  // two they seldom push each other out.
  static constexpr size_t kSets = 32;
  static constexpr size_t kEntries = 2 * kSets;

  // The semaphores a DMA's handles name: its receive one, and its send one (null for none).
  struct Found {
    Semaphore* recv = nullptr;
    Semaphore* send = nullptr;
  };

  // The set of a DMA that names `recv` and `send` (null: no send semaphore). Neighbours' chips
  // lie strides apart and their semaphores at the same indices: the hash spreads both over the
  // sets.
  static size_t SetOf(SemaphoreHandle recv, const SemaphoreHandle* send) {
    const Key key = KeyOf(recv, send);
    return Sets::SetOf(key.recv ^ std::rotl(key.send, 29));
  }

  // What `recv` and `send` name when they were remembered together, else null.
  const Found* Find(SemaphoreHandle recv, const SemaphoreHandle* send) {
    const Found* found = sets_.Find(SetOf(recv, send), KeyOf(recv, send));
    return found && found->recv ? found : nullptr;  // an empty way matches no DMA
  }
  // `found`, which `recv` and `send` name, exist and are DMA semaphores. It takes the place of
  // the pair of its set used longest ago.
  void Remember(SemaphoreHandle recv, const SemaphoreHandle* send, const Found& found) {
    sets_.Remember(SetOf(recv, send), KeyOf(recv, send), found);
  }

 private:
  struct Key {
    uint64_t recv = ~uint64_t{0};  // an empty entry's semaphores are null
    uint64_t send = ~uint64_t{0};
    bool operator==(const Key&) const = default;
  };
  static uint64_t Bits(SemaphoreHandle h) { return uint64_t{h.chip} << 32 | h.index; }
  // No send semaphore is one no handle names (a chip's index is below the slice's chips).
  static Key KeyOf(SemaphoreHandle recv, const SemaphoreHandle* send) {
    return {Bits(recv), send ? Bits(*send) : ~uint64_t{0} - 1};
  }
  // Both ways of a set on one cache line: a lookup reads one line.
  using Sets = TwoWaySets<Key, Found, kSets, WayLayout::kSetPerLine>;
  Sets sets_;
};

}  // namespace tpusim::sim
