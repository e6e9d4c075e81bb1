#include "sim/bandwidth_port.h"

#include <algorithm>
#include <limits>

namespace tpusim::sim {

void BandwidthPort::Emit(const Busy& busy) {
  if (busy.end == busy.start) return;
  if (has_pending_ && pending_.end == busy.start && pending_.transfer == busy.transfer) {
    pending_.end = busy.end;
    return;
  }
  if (has_pending_ && trace_) Write(pending_);
  pending_ = busy;
  has_pending_ = true;
}

Picoseconds BandwidthPort::ReserveTraced(Picoseconds now, Picoseconds earliest,
                                         Picoseconds duration, uint64_t bytes, uint64_t transfer_id,
                                         const std::string* label) {
  size_t head = head_;
  for (; head < calendar_.size() && calendar_[head].end <= now; ++head)
    Emit(Entry(head));
  if (head == calendar_.size()) {
    calendar_.clear();
    tags_.clear();
    head = 0;
  }
  head_ = head;
  Compact();
  Picoseconds start = earliest;
  const size_t at = FindGap(duration, start);
  tags_.insert(tags_.begin() + static_cast<std::ptrdiff_t>(at), Tag{transfer_id, label});
  calendar_.insert(calendar_.begin() + at, Span{start, start + duration});
  busy_ += duration;
  bytes_ += bytes;
  return start;
}

void BandwidthPort::EraseTags(size_t count) {
  tags_.erase(tags_.begin(), tags_.begin() + static_cast<std::ptrdiff_t>(count));
}

void BandwidthPort::Pass(Picoseconds start, const std::string* label) {
  ++signals_;
  if (!trace_) return;
  // Signals are sent in time order but cross their links at different distances from it.
  auto at = marks_.end();
  while (at != marks_.begin() + static_cast<std::ptrdiff_t>(marks_head_) && (at - 1)->when > start)
    --at;
  marks_.insert(at, Mark{start, label});
}

void BandwidthPort::WriteMarksBefore(Picoseconds limit) {
  while (marks_head_ < marks_.size() && marks_[marks_head_].when < limit) {
    const Mark& mark = marks_[marks_head_++];
    trace_->Instant(track_, mark.when, mark.label ? *mark.label : std::string_view("signal"));
  }
  if (marks_head_ == marks_.size()) {
    marks_.clear();
    marks_head_ = 0;
  }
}

void BandwidthPort::Write(const Busy& busy) {
  // A mark at a slice's start goes before it; one inside it, between its ends.
  WriteMarksBefore(busy.start + 1);
  trace_->Begin(track_, busy.start, *busy.label);
  WriteMarksBefore(busy.end);
  trace_->End(track_, busy.end);
}

void BandwidthPort::FlushTrace() {
  for (size_t i = head_; i < calendar_.size(); ++i)
    Emit(Entry(i));
  calendar_.clear();
  tags_.clear();
  head_ = 0;
  if (has_pending_ && trace_) Write(pending_);
  has_pending_ = false;
  if (trace_) WriteMarksBefore(std::numeric_limits<Picoseconds>::max());
}

}  // namespace tpusim::sim
