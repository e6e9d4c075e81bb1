#pragma once

// The shape of the DMA engine's memo of buffers (sim/dma_buffer_cache.h): a few sets of two ways
// each, the way used last first, so a miss replaces the one used longest ago. A lookup reads one
// cache line, or two when the answer may be in the second way: the set of a key is picked by a
// multiplicative hash, which spreads the handles of neighbouring chips (the same indices on chips
// strides apart) over the sets.
//
// Where the two ways lie is the memo's choice (`kLayout`): a line each when a key and its value
// fill most of a line (the buffer memo), or both in one line when they are small. A default-made
// Key must match no key a memo asks for: it marks an empty way.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tpusim::sim {

enum class WayLayout {
  kLinePerWay,  // each way (key and value) on its own cache line
  kSetPerLine,  // both ways' keys, then both values, on one line
};

template <typename Key, typename Value, size_t kSets, WayLayout kLayout>
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
    Set& s = sets_[set];
    if (s.key(0) == key) return &s.value(0);
    if (!(s.key(1) == key)) return nullptr;
    std::swap(s.key(0), s.key(1));
    std::swap(s.value(0), s.value(1));
    return &s.value(0);
  }
  // `key` has `value`: it goes first in its set, in place of the one used longest ago.
  void Remember(size_t set, const Key& key, const Value& value) {
    Set& s = sets_[set];
    s.key(1) = s.key(0);
    s.value(1) = s.value(0);
    s.key(0) = key;
    s.value(0) = value;
  }

 private:
  struct alignas(64) Way {
    Key key{};
    Value value{};
  };
  struct LinePerWay {
    Way ways[2];
    Key& key(int w) { return ways[w].key; }
    Value& value(int w) { return ways[w].value; }
  };
  static constexpr size_t kSetBytes = std::bit_ceil(2 * (sizeof(Key) + sizeof(Value)));
  static_assert(kLayout != WayLayout::kSetPerLine || kSetBytes <= 64,
                "a set that shares a line fits in one");
  struct alignas(kSetBytes) SetPerLine {
    Key keys[2]{};
    Value values[2]{};
    Key& key(int w) { return keys[w]; }
    Value& value(int w) { return values[w]; }
  };
  using Set = std::conditional_t<kLayout == WayLayout::kLinePerWay, LinePerWay, SetPerLine>;
  Set sets_[kSets];
};

}  // namespace tpusim::sim
