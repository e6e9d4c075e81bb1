#include "sim/buffer_writers.h"

#include <algorithm>
#include <cstdint>

namespace tpusim::sim {

namespace {

// The fewest gaps made in front, and the most kept before a compaction: few, as a buffer
// mostly has a handful of writers in flight, and its entries (a line or so each) then stay
// in the same few lines instead of sliding through a larger block.
constexpr size_t kFewGaps = 4;

}  // namespace

BoxFootprint BufferWriters::Footprint(const ByteBox& box, bool dense) {
  Flush();
  BoxFootprint f = FootprintOf(box, dense);
  const size_t dims = box.counts.size();
  if (live_ == 0) {
    lattice_ = dims <= BoxFootprint::kMaxDims && box.strides.size() == dims &&
               std::all_of(box.strides.begin(), box.strides.end(),
                           [](uint64_t stride) { return stride <= UINT32_MAX; });
    if (lattice_) {
      std::copy(box.strides.begin(), box.strides.end(), strides_);
      element_bytes_ = box.element_bytes;
      dims_ = static_cast<uint8_t>(dims);
    }
  }
  f.placed = f.placed && lattice_ && dims == dims_ && box.strides.size() == dims &&
             box.element_bytes == element_bytes_ &&
             std::equal(box.strides.begin(), box.strides.end(), strides_);
  return f;
}

void BufferWriters::Insert(const BoxFootprint& box, uint64_t id, const Transfer* writer) {
  Flush();
  const Entry entry{box, id, writer};
  const uint64_t start = box.start;
  widest_ = std::max(widest_, box.end - start);
  ++live_;
  if (entries_.size() == head_ || Before(entries_.back(), start, id)) {
    entries_.push_back(entry);
    return;
  }
  const auto head = entries_.begin() + static_cast<std::ptrdiff_t>(head_);
  // Before every writer (entries_[head_] is one): the gap in front of them takes it. Where
  // there is none, as many gaps as there are entries are made in front, so copies issued in
  // descending address order cost a constant each on average, as ascending ones do.
  if (!Before(*head, start, id)) {
    if (head_ == 0) {
      const size_t slack = std::max(entries_.size(), kFewGaps);
      entries_.insert(entries_.begin(), slack, Entry{});
      head_ = static_cast<uint32_t>(slack);
    }
    entries_[--head_] = entry;
    return;
  }
  entries_.insert(std::partition_point(head, entries_.end(),
                                       [&](const Entry& e) { return Before(e, start, id); }),
                  entry);
}

void BufferWriters::Remove(uint64_t start, uint64_t id) {
  if (noted_ == kNoted) RemoveNoted();
  removed_[noted_++] = {start, id};
}

void BufferWriters::RemoveNoted() {
  for (uint32_t i = 0; i < noted_; ++i)
    Erase(removed_[i].start, removed_[i].id);
  noted_ = 0;
}

void BufferWriters::Erase(uint64_t start, uint64_t id) {
  // Copies land mostly in the order they started: the oldest writer is at head_.
  auto at = entries_.begin() + static_cast<std::ptrdiff_t>(head_);
  if (at == entries_.end() || at->id != id || at->box.start != start)
    at = std::partition_point(at, entries_.end(),
                              [&](const Entry& e) { return Before(e, start, id); });
  if (at == entries_.end() || at->id != id || !at->writer) return;  // not a writer here
  at->writer = nullptr;
  if (--live_ == 0) {
    // A buffer that once had thousands of writers in flight keeps no room for them.
    if (entries_.capacity() > 64) {
      entries_ = {};
    } else {
      entries_.clear();
    }
    head_ = 0;
    widest_ = 0;
    return;
  }
  while (!entries_[head_].writer)
    ++head_;
  // Gaps that outnumber the writers go, all at once: a copy of the live entries after at
  // least as many removals, so each removal costs a constant on average.
  const size_t gaps = entries_.size() - live_;
  if (gaps > kFewGaps && gaps > live_) {
    std::erase_if(entries_, [](const Entry& e) { return !e.writer; });
    head_ = 0;
  }
}

}  // namespace tpusim::sim
