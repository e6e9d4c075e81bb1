#pragma once

// A resource that moves bytes at a fixed rate: a memory's port or one direction of an ICI
// link. It keeps a calendar of the intervals transfers hold it for. A new chunk takes the
// earliest gap that fits at or after the time it can start (earliest-ready, with
// backfill), so concurrent DMAs that alternate chunks share the port fairly and a
// multi-hop chunk does not leave idle holes on the links it waited for. Past intervals go
// to the trace as one slice per run of chunks from the same DMA.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/engine.h"
#include "base/inline_vector.h"
#include "sim/base_names.h"
#include "sim/port_calendar.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class BandwidthPort {
 public:
  BandwidthPort(std::string name, double bytes_per_second, traces::TraceSink* trace,
                traces::TrackId track)
      : trace_(trace), bytes_per_second_(bytes_per_second), track_(track), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  double bytes_per_second() const { return bytes_per_second_; }
  Picoseconds Duration(uint64_t bytes) const {
    // Chunks are mostly of one size, so the last answer is usually the next one.
    if (bytes != last_bytes_) {
      last_bytes_ = bytes;
      last_duration_ = TransferTime(bytes, bytes_per_second_);
    }
    return last_duration_;
  }

  // Holds the port for `bytes` in the earliest free gap starting at or after `earliest`.
  // `now` lets the port retire (and trace) intervals that are over. Returns the start.
  Picoseconds Reserve(Picoseconds now, Picoseconds earliest, uint64_t bytes, uint64_t transfer_id,
                      const std::string* label) {
    return ReserveFor(now, earliest, Duration(bytes), bytes, transfer_id, label);
  }
  // The same for a duration a timing model computed (row misses, say) instead of the rate.
  // Inline (below): every chunk books two or three ports, and the call (seven arguments,
  // one on the stack) was a fifth of a booking's instructions.
  Picoseconds ReserveFor(Picoseconds now, Picoseconds earliest, Picoseconds duration,
                         uint64_t bytes, uint64_t transfer_id, const std::string* label);

  // A semaphore signal's packet crosses at `start` (LinkTiming::BookSignal): counted, and
  // marked on the trace as an instant named `label`, without holding the port. `start` is
  // not before the time of the last Reserve (a signal is booked as it is sent).
  void Pass(Picoseconds start, const std::string* label);

  // Writes every interval still held to the trace. Called at the end of a run.
  void FlushTrace();

  Picoseconds busy_time() const { return busy_; }
  uint64_t bytes_moved() const { return bytes_; }  // the DMAs' bytes; signals count apart
  uint64_t signals() const { return signals_; }
  // What the run's statistics report of this port, counted for `chip`.
  PortStats Stats(ChipId chip) const { return PortStats{name_, chip, busy_, bytes_, signals_}; }

 private:
  struct Busy {
    Picoseconds start;
    Picoseconds end;
    uint64_t transfer;
    const std::string* label;  // owned by the transfer, which outlives the run
  };
  // A calendar entry holds only its times: the scans of every booking (Retire, the search for
  // a gap) read them, two to a line fewer than with the transfer and label beside them. Those
  // are for the trace alone, kept in tags_ in the same order, and only when there is a trace.
  struct Span {
    Picoseconds start;
    Picoseconds end;
  };
  struct Tag {
    uint64_t transfer;
    const std::string* label;
  };
  // ReserveFor's parts. Untraced, a retired interval only leaves the calendar (Retire);
  // with a trace, ReserveTraced emits it and keeps tags_ in step, out of line, so that the
  // untraced booking stays small enough to inline.
  [[gnu::always_inline]] void Compact();
  // Where an interval of `duration` from `start` goes (moving `start` past the intervals in
  // its way): the index to insert it at.
  [[gnu::always_inline]] size_t FindGap(Picoseconds duration, Picoseconds& start) const;
  [[gnu::noinline]] Picoseconds ReserveTraced(Picoseconds now, Picoseconds earliest,
                                              Picoseconds duration, uint64_t bytes,
                                              uint64_t transfer_id, const std::string* label);
  [[gnu::noinline]] void EraseTags(size_t count);
  Busy Entry(size_t i) const {
    const Span& span = calendar_[i];
    const Tag tag = trace_ ? tags_[i] : Tag{0, nullptr};
    return Busy{span.start, span.end, tag.transfer, tag.label};
  }
  struct Mark {
    Picoseconds when;
    const std::string* label;
  };
  // Inlined into ReserveFor, its one caller: the loop is a few instructions, and a call per
  // booking saves and restores as many registers again.
  [[gnu::always_inline]] void Retire(Picoseconds now);
  void Emit(const Busy& busy);
  // Writes `busy` with the signals' marks before and inside it, in time order as the trace
  // wants them.
  void Write(const Busy& busy);
  void WriteMarksBefore(Picoseconds limit);

  // What every chunk reads first (the retired run Emit merges into, the calendar's head
  // inline), within the three lines the calendar's look-ahead prefetches
  // (DmaDispatcher::PrefetchChunkEvent) as far as the calendar's first entries; the names and
  // the trace's marks after.
  size_t head_ = 0;
  mutable uint64_t last_bytes_ = 0;
  mutable Picoseconds last_duration_ = 0;
  Picoseconds busy_ = 0;
  uint64_t bytes_ = 0;
  Busy pending_{0, 0, 0, nullptr};  // last retired run, merged with the next if contiguous
  bool has_pending_ = false;
  traces::TraceSink* trace_;
  // Sorted, non-overlapping; entries before head_ are retired. A moving head (compacted now
  // and then) moves far less than erasing each interval as it ends.
  PortCalendar<Span, 4> calendar_;
  double bytes_per_second_;
  traces::TrackId track_;
  uint64_t signals_ = 0;
  std::string name_;
  std::vector<Tag> tags_;  // calendar_'s transfers and labels, with a trace
  // Signals not yet written, by time: only kept with a trace.
  std::vector<Mark> marks_;
  size_t marks_head_ = 0;
};

inline void BandwidthPort::Retire(Picoseconds now) {
  const Span* calendar = calendar_.data();
  const size_t size = calendar_.size();
  size_t head = head_;
  while (head < size && calendar[head].end <= now)
    ++head;
  if (head == size) {
    calendar_.clear();
    head = 0;
  }
  head_ = head;
}

inline void BandwidthPort::Compact() {
  // Retired intervals leave the calendar's front only when it is full and they are at least
  // half of it, so the moves stay no more than the intervals retired, and a calendar of a
  // few intervals (most ports) never moves at all.
  if (calendar_.size() == calendar_.capacity() && head_ * 2 >= calendar_.size()) {
    calendar_.erase_front(head_);
    if (trace_) EraseTags(head_);
    head_ = 0;
  }
}

inline size_t BandwidthPort::FindGap(Picoseconds duration, Picoseconds& start) const {
  const Span* it = calendar_.begin() + head_;
  for (; it != calendar_.end(); ++it) {
    if (it->end <= start) continue;
    if (start + duration <= it->start) break;  // fits in the gap before this interval
    start = std::max(start, it->end);
  }
  return static_cast<size_t>(it - calendar_.begin());
}

inline Picoseconds BandwidthPort::ReserveFor(Picoseconds now, Picoseconds earliest,
                                             Picoseconds duration, uint64_t bytes,
                                             uint64_t transfer_id, const std::string* label) {
  if (trace_) [[unlikely]]
    return ReserveTraced(now, earliest, duration, bytes, transfer_id, label);
  Retire(now);
  Compact();
  Picoseconds start = earliest;
  const size_t at = FindGap(duration, start);
  calendar_.insert(calendar_.begin() + at, Span{start, start + duration});
  busy_ += duration;
  bytes_ += bytes;
  return start;
}

}  // namespace tpusim::sim
