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

namespace tpusim::sim {

struct Transfer;

class BufferWriters {
 public:
  // A writer of bytes [start, end), numbered `id` (unique, increasing in start order).
  void Insert(uint64_t start, uint64_t end, uint64_t id, const Transfer* writer);
  // The writer that Insert(start, ..., id, ...) added.
  void Remove(uint64_t start, uint64_t id);
  size_t size() const { return live_; }
  // Calls f(writer) for each writer that starts after start - widest and before `end`, in
  // order of (start, id): every writer that may share a byte with [start, end), and maybe
  // some that do not.
  template <typename F>
  void ForEachCandidate(uint64_t start, uint64_t end, F&& f) const {
    auto it = entries_.begin() + static_cast<std::ptrdiff_t>(head_);
    // A writer that starts at or before start - widest ends before `start`.
    if (start >= widest_) {
      const uint64_t before = start - widest_;
      // Copies issued in address order start past every writer: no search for them.
      if (entries_.empty() || entries_.back().start <= before) return;
      it = std::partition_point(it, entries_.end(),
                                [before](const Entry& e) { return e.start <= before; });
    }
    for (; it != entries_.end() && it->start < end; ++it)
      if (it->writer) f(it->writer);
  }

 private:
  struct Entry {
    uint64_t start = 0;
    uint64_t id = 0;
    const Transfer* writer = nullptr;  // null: removed, a gap until the next compaction
  };
  static bool Before(const Entry& a, uint64_t start, uint64_t id) {
    return a.start < start || (a.start == start && a.id < id);
  }

  std::vector<Entry> entries_;  // by (start, id) from head_ on
  size_t head_ = 0;             // entries_[0, head_) are all gaps; entries_[head_] a writer
  size_t live_ = 0;
  uint64_t widest_ = 0;  // the longest span (end - start) among the writers
};

}  // namespace tpusim::sim
