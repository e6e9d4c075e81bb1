#pragma once

// The DMAs in flight into one buffer, by the first byte of their destination box, so a new
// DMA compares itself only with the writers whose bytes can reach its own: those that start
// less than `widest` bytes before it (a kernel that issues thousands of small copies into
// one buffer would otherwise compare each with all the others).
//
// A sorted vector rather than a tree: every DMA enters and leaves one of these, and a tree
// node was a heap block and a rebalancing each way. DMAs mostly start in address order
// (appended at the back) and land in start order (removed at the front); a removed writer
// leaves a gap that a later compaction closes, so a removal moves no other entry.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/base_names.h"
#include "sim/byte_box.h"

namespace tpusim::sim {

struct Transfer;

// Aligned to a pair of lines: its fields fill the two lines of one pair.
class alignas(128) BufferWriters {
 public:
  // A writer: its destination box's footprint, its number (unique, increasing in start
  // order) and its DMA. What the check reads is kept here, in one array, so that a new DMA
  // compares itself with the others without reading their DMAs (lines left cold on a pod).
  struct Entry {
    BoxFootprint box;
    uint64_t id = 0;
    const Transfer* writer = nullptr;  // null: removed, a gap until the next compaction
  };

  // The footprint of `box` as this buffer's writers keep theirs: placed only on the lattice
  // (strides and element bytes) of the writers in flight, so that two placed footprints are
  // compared by their index ranges. With none in flight, the box's lattice becomes theirs.
  // `dense` is BoxIsDense(box) (FootprintOf).
  BoxFootprint Footprint(const ByteBox& box, bool dense);
  // For FootprintsOverlap of two placed footprints.
  uint32_t element_bytes() const { return element_bytes_; }
  size_t dims() const { return dims_; }

  // A writer of the box with footprint `box` (from Footprint, while no other writer was
  // added or removed), numbered `id`.
  void Insert(const BoxFootprint& box, uint64_t id, const Transfer* writer);
  // The writer that Insert(box, id, ...) added, box.start being `start`. It is noted here
  // and leaves the entries when the writers are next read or added to: a DMA lands long
  // after it started, when the buffer's entries are cold, and the next DMA into the buffer
  // reads them anyway (a removal cost a miss on the header and one on the entry).
  void Remove(uint64_t start, uint64_t id);
  size_t size() {
    Flush();
    return live_;
  }
  // Calls f(entry) for each writer that starts after start - widest and before `end`, in
  // order of (start, id): every writer that may share a byte with [start, end), and maybe
  // some that do not.
  template <typename F>
  void ForEachCandidate(uint64_t start, uint64_t end, F&& f) {
    Flush();
    auto it = entries_.begin() + static_cast<std::ptrdiff_t>(head_);
    // A writer that starts at or before start - widest ends before `start`.
    if (start >= widest_) {
      const uint64_t before = start - widest_;
      // Copies issued in address order start past every writer: no search for them.
      if (entries_.empty() || entries_.back().box.start <= before) return;
      it = std::partition_point(it, entries_.end(),
                                [before](const Entry& e) { return e.box.start <= before; });
    }
    for (; it != entries_.end() && it->box.start < end; ++it)
      if (it->writer) f(*it);
  }

 private:
  static bool Before(const Entry& a, uint64_t start, uint64_t id) {
    return a.box.start < start || (a.box.start == start && a.id < id);
  }

  void Flush() {
    if (noted_ > 0) RemoveNoted();
  }
  void RemoveNoted();
  void Erase(uint64_t start, uint64_t id);

  // Two lines of one aligned pair (which an adjacent-line prefetcher may fetch together):
  // the first holds what Remove writes; a check reads both.
  static constexpr size_t kNoted = 3;
  struct Noted {
    uint64_t start = 0;
    uint64_t id = 0;
  };
  uint8_t noted_ = 0;  // removals noted and not yet made, in the order they came
  // The lattice placed footprints are on: dims_ strides, when lattice_ (else none: no writer
  // yet, or one of more dimensions than a footprint places).
  uint8_t dims_ = 0;
  bool lattice_ = false;
  uint32_t live_ = 0;
  Noted removed_[kNoted];
  uint32_t head_ = 0;  // entries_[0, head_) are all gaps; entries_[head_] a writer
  uint32_t element_bytes_ = 0;
  std::vector<Entry> entries_;  // by (start, id) from head_ on
  uint64_t widest_ = 0;         // the longest span (end - start) among the writers
  // 32 bits each, so that six fit the record's two lines; a lattice of a larger stride is
  // none (its boxes go to BoxesOverlap).
  uint32_t strides_[BoxFootprint::kMaxDims] = {};
};
static_assert(sizeof(BufferWriters) == 128);

}  // namespace tpusim::sim
