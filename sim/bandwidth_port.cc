#include "sim/bandwidth_port.h"

#include <algorithm>
#include <limits>

namespace tpusim::sim {

void BandwidthPort::Retire(Picoseconds now) {
  const Busy* calendar = calendar_.data();
  const size_t size = calendar_.size();
  size_t head = head_;
  // Untraced, a retired interval only leaves the calendar: Emit keeps runs for the trace.
  if (trace_) {
    for (; head < size && calendar[head].end <= now; ++head)
      Emit(calendar[head]);
  } else {
    while (head < size && calendar[head].end <= now)
      ++head;
  }
  if (head == size) {
    calendar_.clear();
    head = 0;
  }
  head_ = head;
}

Picoseconds BandwidthPort::ReserveFor(Picoseconds now, Picoseconds earliest, Picoseconds duration,
                                      uint64_t bytes, uint64_t transfer_id,
                                      const std::string* label) {
  Retire(now);
  // Retired intervals leave the calendar's front only when it is full and they are at least
  // half of it, so the moves stay no more than the intervals retired, and a calendar of a
  // few intervals (most ports) never moves at all.
  if (calendar_.size() == calendar_.capacity() && head_ * 2 >= calendar_.size()) {
    calendar_.erase_front(head_);
    head_ = 0;
  }
  Picoseconds start = earliest;
  const Busy* it = calendar_.begin() + head_;
  for (; it != calendar_.end(); ++it) {
    if (it->end <= start) continue;
    if (start + duration <= it->start) break;  // fits in the gap before this interval
    start = std::max(start, it->end);
  }
  calendar_.insert(it, Busy{start, start + duration, transfer_id, label});
  busy_ += duration;
  bytes_ += bytes;
  return start;
}

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
    Emit(calendar_[i]);
  calendar_.clear();
  head_ = 0;
  if (has_pending_ && trace_) Write(pending_);
  has_pending_ = false;
  if (trace_) WriteMarksBefore(std::numeric_limits<Picoseconds>::max());
}

}  // namespace tpusim::sim
