#pragma once

// What a DMA engine's checks and its start read of the buffers its DMAs name (DmaDispatcher::
// Check, Start): a buffer's size and the address of its first byte. Found through the chip,
// its memory and the memory's table of buffers, that is three or four cache misses a buffer
// on a pod, and the destination lies on another chip; a kernel copies between the same few
// buffers over and over. A chip's buffers are numbered in the order they are made and never
// renumbered, and a live buffer's size and place never change, so what was found stays true
// until the buffer is freed. A buffer found here is marked (Memory::NoteRemembered), and the
// slice counts the frees of marked buffers (SliceState::buffer_frees): each answer holds only
// while that count is what it was when the answer was found. Frees of buffers no engine
// remembers, as programs free their temporaries after each op, forget nothing.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "sim/base_names.h"
#include "sim/two_way_sets.h"

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
    if (const Found* found = sets_.Find(SetOf(b), KeyOf(b, frees))) return *found;
    return std::nullopt;
  }
  // `b` is live, with `found`, while the slice has freed `frees` buffers. It takes the place
  // of the buffer of its set used longest ago.
  void Remember(const BufferHandle& b, uint64_t frees, Found found) {
    sets_.Remember(SetOf(b), KeyOf(b, frees), found);
  }

  // The set `b` belongs to. Every field counts: neighbours' buffers share indices on chips
  // strides apart, and each core's VMEM numbers its own.
  static size_t SetOf(const BufferHandle& b) {
    return Sets::SetOf((uint64_t{b.chip} << 32 | b.index) ^
                       (uint64_t{static_cast<uint32_t>(b.space)} << 24) ^ (uint64_t{b.core} << 16));
  }

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
  // A key and its answer fill most of a line: a lookup reads the first way's line, and on a
  // miss there the second's.
  using Sets = TwoWaySets<Key, Found, kSets>;
  Sets sets_;
};

}  // namespace tpusim::sim
