#pragma once

// The paths a DMA engine's recent DMAs took (Transfer::path), by the memories they read and
// write. Router::PathTo walks the route router by router, each on its own chip: on a pod
// every router's tables and every link it passes are cache misses, for every DMA. A kernel
// sends to the same few memories over and over (a ring's neighbour, a torus's 2N), so the
// engine remembers the last few paths. A path depends only on its two memories (what a
// router's outputs reach is fixed once the model is elaborated), so a
// remembered path is the walk's result exactly.

#include <cstddef>
#include <cstdint>

#include "base/inline_vector.h"
#include "sim/chunk.h"
#include "sim/router.h"

namespace tpusim::sim {

class PathCache {
 public:
  // Enough for a 3-D torus's six neighbours and the local copy beside them.
  static constexpr size_t kEntries = 8;
  using Path = base::InlineVector<PathHop, 4>;

  // What a path depends on: the chip and memory slot of its source and, unless the copy stays
  // within one memory (then the path is the source's hop alone), of its destination.
  static uint64_t KeyOf(uint64_t source, uint64_t destination, bool within_one_memory) {
    // Chip and slot are an address's top 22 bits (sim/chunk.h); the low 32 bits of a key
    // hold the destination's, or all ones, which no destination has.
    const uint64_t to = within_one_memory ? 0xffffffffu : destination >> kAddressSlotShift;
    return (source >> kAddressSlotShift) << 32 | to;
  }

  // The path for `key`: a remembered one, or the one `walk(path)` appends to an empty path,
  // which then takes the place of the one remembered longest.
  template <typename Walk>
  const Path& Find(uint64_t key, Walk&& walk) {
    for (size_t i = 0; i < kEntries; ++i) {
      if (keys_[i] == key) return paths_[i];
    }
    const size_t i = next_;
    next_ = (next_ + 1) % kEntries;
    keys_[i] = kNone;  // forgotten until the walk is done
    paths_[i].clear();
    walk(paths_[i]);
    keys_[i] = key;
    return paths_[i];
  }

 private:
  static constexpr uint64_t kNone = ~uint64_t{0};  // a key has at most 54 bits
  uint64_t keys_[kEntries] = {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone};
  size_t next_ = 0;  // the next entry to replace, round the ring
  Path paths_[kEntries];
};

}  // namespace tpusim::sim
