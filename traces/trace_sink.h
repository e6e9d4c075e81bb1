#pragma once

// The one interface the simulator records through. The model calls these in
// simulation-time order per track; writers (Perfetto protobuf, Chrome JSON) turn them
// into files. Timestamps are picoseconds of simulated time; writers convert.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tpusim::traces {

using TrackId = uint64_t;  // 0 is "no track"
using FlowId = uint64_t;   // 0 is "no flow"

enum class CounterUnit { kCount, kBytes, kBytesPerSecond, kTimeNs };

struct Arg {
  std::string name;
  std::variant<int64_t, uint64_t, double, bool, std::string> value;
};
using Args = std::vector<Arg>;

class TraceSink {
 public:
  virtual ~TraceSink() = default;

  // A top-level track (one per chip). Ranks order siblings explicitly.
  virtual TrackId AddProcessTrack(std::string_view name, int rank) = 0;
  // A slice track nested under `parent`.
  virtual TrackId AddTrack(TrackId parent, std::string_view name, int rank) = 0;
  // A counter track nested under `parent`.
  virtual TrackId AddCounterTrack(TrackId parent, std::string_view name, CounterUnit unit,
                                  int rank) = 0;

  // Slices on one track must nest strictly; callers give overlapping work its own track.
  // `flow_out` starts a flow arrow at this slice; `flow_in` ends one here.
  virtual void Begin(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args = {},
                     FlowId flow_out = 0, FlowId flow_in = 0) = 0;
  virtual void End(TrackId track, uint64_t ts_ps) = 0;
  virtual void Instant(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args = {},
                       FlowId flow_out = 0, FlowId flow_in = 0) = 0;
  virtual void Counter(TrackId track, uint64_t ts_ps, double value) = 0;

  // Writes everything buffered. Called at the end of a run, also after a failure.
  virtual void Finish() = 0;
};

// Records nothing; used when no trace was asked for.
class NullTraceSink final : public TraceSink {
 public:
  TrackId AddProcessTrack(std::string_view, int) override { return ++next_; }
  TrackId AddTrack(TrackId, std::string_view, int) override { return ++next_; }
  TrackId AddCounterTrack(TrackId, std::string_view, CounterUnit, int) override { return ++next_; }
  void Begin(TrackId, uint64_t, std::string_view, const Args&, FlowId, FlowId) override {}
  void End(TrackId, uint64_t) override {}
  void Instant(TrackId, uint64_t, std::string_view, const Args&, FlowId, FlowId) override {}
  void Counter(TrackId, uint64_t, double) override {}
  void Finish() override {}

 private:
  TrackId next_ = 0;
};

// Thrown when a trace cannot be written or read: the file cannot be created or written,
// a call names a track that was never added, or the bytes are not a trace. The message
// names the file or track, the reason and, where there is one, the fix.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class TraceFormat { kPerfetto, kChromeJson };

// Picks the format from the file name: ".json" gives Chrome JSON, anything else Perfetto.
TraceFormat TraceFormatForPath(std::string_view path);

// Opens `path` for writing; throws tpusim::traces::TraceError with the path and the
// reason when the file cannot be created.
std::unique_ptr<TraceSink> OpenTraceFile(const std::string& path);
std::unique_ptr<TraceSink> OpenTraceFile(const std::string& path, TraceFormat format);

}  // namespace tpusim::traces
