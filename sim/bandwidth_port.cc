#include "sim/bandwidth_port.h"

#include <algorithm>

namespace tpusim::sim {

Picoseconds BandwidthPort::Reserve(Picoseconds now, Picoseconds earliest, uint64_t bytes,
                                   uint64_t transfer_id, const std::string* label) {
  Retire(now);
  const Picoseconds duration = Duration(bytes);
  Picoseconds start = earliest;
  auto it = calendar_.begin();
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
  while (!calendar_.empty() && calendar_.front().end <= now) {
    Emit(calendar_.front());
    calendar_.pop_front();
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
  for (const Busy& b : calendar_)
    Emit(b);
  calendar_.clear();
  if (has_pending_ && trace_) {
    trace_->Begin(track_, pending_.start, *pending_.label);
    trace_->End(track_, pending_.end);
  }
  has_pending_ = false;
}

}  // namespace tpusim::sim
