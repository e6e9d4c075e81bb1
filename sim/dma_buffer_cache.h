#pragma once

// What a DMA engine's checks and its start read of the buffers its DMAs name (DmaDispatcher::
// Check, Start): a buffer's size and the address of its first byte. Found through the chip,
// its memory and the memory's table of buffers, that is three or four cache misses a buffer
// on a pod, and the destination lies on another chip; a kernel copies between the same few
// buffers over and over. A chip's buffers are numbered in the order they are made and never
// renumbered, and a live buffer's size and place never change, so what was found stays true
// until a buffer is freed: each answer holds only while the slice's count of frees
// (SliceState::buffer_frees) is what it was when the answer was found.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "sim/base_names.h"

namespace tpusim::sim {

class DmaBufferCache {
 public:
  // A live buffer: its bytes, and the global address of its first byte (sim/chunk.h).
  struct Found {
    uint64_t size = 0;
    uint64_t address = 0;
  };
  static constexpr size_t kSets = 16;

  // What was remembered of `b` when the slice had freed `frees` buffers, the count it has now;
  // else nothing.
  std::optional<Found> Find(const BufferHandle& b, uint64_t frees) {
    Set& set = sets_[SetOf(b)];
    const Key key = KeyOf(b, frees);
    if (set.entries[0].key == key) return set.entries[0].found;
    if (set.entries[1].key != key) return std::nullopt;
    std::swap(set.entries[0], set.entries[1]);  // used last goes first, leaves last
    return set.entries[0].found;
  }
  // `b` is live, with `found`, while the slice has freed `frees` buffers. It takes the place
  // of the buffer of its set used longest ago.
  void Remember(const BufferHandle& b, uint64_t frees, Found found) {
    Set& set = sets_[SetOf(b)];
    set.entries[1] = set.entries[0];
    set.entries[0] = {KeyOf(b, frees), found};
  }

  // The set `b` belongs to: a multiplicative hash of its chip and index spreads neighbours'
  // buffers, which share indices on chips strides apart.
  static size_t SetOf(const BufferHandle& b) {
    const uint64_t mixed = (uint64_t{b.chip} << 32 | b.index) ^
                           (uint64_t{static_cast<uint32_t>(b.space)} << 24) ^
                           (uint64_t{b.core} << 16);
    return static_cast<size_t>((mixed * 0x9e3779b97f4a7c15u) >> 60);
  }
  static_assert(kSets == 16, "SetOf keeps the hash's top 4 bits");

 private:
  struct Key {
    uint64_t chip_index = ~uint64_t{0};
    uint64_t space_core = 0;
    uint64_t frees = ~uint64_t{0};  // no slice frees that many: an empty entry matches nothing
    bool operator==(const Key&) const = default;
  };
  static Key KeyOf(const BufferHandle& b, uint64_t frees) {
    return {uint64_t{b.chip} << 32 | b.index,
            uint64_t{static_cast<uint32_t>(b.space)} << 32 | b.core, frees};
  }
  struct alignas(64) Entry {  // a line each
    Key key;
    Found found;
  };
  // A lookup reads the first entry's line, and on a miss there the second's.
  struct Set {
    Entry entries[2];
  };
  Set sets_[kSets];
};

}  // namespace tpusim::sim
