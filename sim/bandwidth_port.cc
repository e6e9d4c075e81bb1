#include "sim/bandwidth_port.h"

#include <algorithm>

namespace tpusim::sim {

Picoseconds BandwidthPort::ReserveFor(Picoseconds now, Picoseconds earliest, Picoseconds duration,
                                      uint64_t bytes, uint64_t transfer_id,
                                      const std::string* label) {
  Retire(now);
  Picoseconds start = earliest;
  auto it = calendar_.begin() + static_cast<std::ptrdiff_t>(head_);
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

void BandwidthPort::Retire(Picoseconds now) {
  while (head_ < calendar_.size() && calendar_[head_].end <= now) {
    Emit(calendar_[head_]);
    ++head_;
  }
  if (head_ == calendar_.size()) {
    calendar_.clear();
    head_ = 0;
  } else if (head_ >= 64 && head_ * 2 >= calendar_.size()) {
    calendar_.erase(calendar_.begin(), calendar_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

void BandwidthPort::Emit(const Busy& busy) {
  if (busy.end == busy.start) return;
  if (has_pending_ && pending_.end == busy.start && pending_.transfer == busy.transfer) {
    pending_.end = busy.end;
    return;
  }
  if (has_pending_ && trace_) {
    trace_->Begin(track_, pending_.start, *pending_.label);
    trace_->End(track_, pending_.end);
  }
  pending_ = busy;
  has_pending_ = true;
}

void BandwidthPort::FlushTrace() {
  for (size_t i = head_; i < calendar_.size(); ++i)
    Emit(calendar_[i]);
  calendar_.clear();
  head_ = 0;
  if (has_pending_ && trace_) {
    trace_->Begin(track_, pending_.start, *pending_.label);
    trace_->End(track_, pending_.end);
  }
  has_pending_ = false;
}

}  // namespace tpusim::sim
