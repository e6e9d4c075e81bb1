#pragma once

// The shape of the DMA engine's memo of buffers (sim/dma_buffer_cache.h): a few sets of two ways
// each, the way used last first, so a miss replaces the one used longest ago. A lookup reads one
// cache line, or two when the answer may be in the second way: the set of a key is picked by a
// multiplicative hash, which spreads the handles of neighbouring chips (the same indices on chips
// strides apart) over the sets.
//
// Each way (a key and its value, which fill most of a line) lies on a line of its own. A
// default-made Key must match no key a memo asks for: it marks an empty way.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tpusim::sim {

template <typename Key, typename Value, size_t kSets>
class TwoWaySets {
  static_assert(std::has_single_bit(kSets) && kSets >= 2,
                "SetOf keeps 1 to 63 whole top bits of the hash: sets come in powers of 2");

 public:
  static constexpr size_t kEntries = 2 * kSets;

  // The set of a key whose fields are mixed into `mixed`: the top bits of its product with
  // 2^64 over the golden ratio (Fibonacci hashing), where every bit of `mixed` counts.
  static size_t SetOf(uint64_t mixed) {
    return static_cast<size_t>((mixed * 0x9e3779b97f4a7c15u) >> (64 - std::countr_zero(kSets)));
  }

  // What was remembered for `key` in set `set`, else null. A hit in the second way moves it
  // first, so the other one is the next to leave.
  Value* Find(size_t set, const Key& key) {
    Way* ways = sets_[set];
    if (ways[0].key == key) return &ways[0].value;
    if (!(ways[1].key == key)) return nullptr;
    std::swap(ways[0], ways[1]);
    return &ways[0].value;
  }
  // `key` has `value`: it goes first in its set, in place of the one used longest ago.
  void Remember(size_t set, const Key& key, const Value& value) {
    Way* ways = sets_[set];
    ways[1] = ways[0];
    ways[0] = {key, value};
  }

 private:
  struct alignas(64) Way {
    Key key{};
    Value value{};
  };
  Way sets_[kSets][2];
};

}  // namespace tpusim::sim
