#pragma once

// Writes a Perfetto protobuf trace (open it at ui.perfetto.dev), one TracePacket at a
// time, so memory does not grow with the length of the run.
//
// Layout: each process track is a Perfetto process track with explicit child ordering;
// child tracks are named tracks under their parent ordered by rank; counter tracks carry
// a CounterDescriptor. Track uuids are the TrackIds (1, 2, 3... in call order), event
// names and argument names are interned on a single packet sequence, and timestamps are
// picoseconds floored to nanoseconds. The same calls always give the same bytes.

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

#include "traces/perfetto_trace.pb.h"
#include "traces/trace_output.h"
#include "traces/trace_sink.h"
#include "traces/track_table.h"

namespace tpusim::traces {

class PerfettoWriter final : public TraceSink {
 public:
  // The one packet sequence this writer emits on; any non-zero value would do.
  static constexpr uint32_t kSequenceId = 1;

  // Writes to `out`, which must outlive the writer.
  explicit PerfettoWriter(std::ostream& out);
  // Owns `out`; `destination` (usually the file path) names it in error messages.
  PerfettoWriter(std::unique_ptr<std::ostream> out, std::string destination);
  // Finishes if Finish was not called, swallowing errors: call Finish to see them.
  ~PerfettoWriter() override;

  PerfettoWriter(const PerfettoWriter&) = delete;
  PerfettoWriter& operator=(const PerfettoWriter&) = delete;

  TrackId AddProcessTrack(std::string_view name, int rank) override;
  TrackId AddTrack(TrackId parent, std::string_view name, int rank) override;
  TrackId AddCounterTrack(TrackId parent, std::string_view name, CounterUnit unit,
                          int rank) override;

  void Begin(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args = {},
             FlowId flow_out = 0, FlowId flow_in = 0) override;
  void End(TrackId track, uint64_t ts_ps) override;
  void Instant(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args = {},
               FlowId flow_out = 0, FlowId flow_in = 0) override;
  void Counter(TrackId track, uint64_t ts_ps, double value) override;

  // Flushes the file. Throws TraceError if any write failed. Later calls are no-ops;
  // recording after Finish throws TraceError.
  void Finish() override;

 private:
  // Returns the packet cleared and stamped with the sequence id (and, on the first packet
  // of the sequence, the flag that starts its interned state).
  perfetto::protos::TracePacket& StartPacket(std::string_view operation);
  void WriteTrackDescriptor(const internal::TrackInfo& track);
  void WriteEvent(perfetto::protos::TrackEvent::Type type, TrackId track, uint64_t ts_ps,
                  std::string_view name, const Args& args, FlowId flow_out, FlowId flow_in);
  // Returns the iid for `name`, adding it to this packet's interned data when new.
  uint64_t InternEventName(std::string_view name);
  uint64_t InternArgName(std::string_view name);
  void WritePacket();

  internal::TraceOutput output_;
  internal::TrackTable tracks_;
  bool finished_ = false;
  bool wrote_first_packet_ = false;
  int next_pid_ = 1;
  // Lets the intern tables be searched with a string_view, without building a string.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using InternTable = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;

  // Interned strings; iids count up from 1 in first-use order, so they are deterministic.
  InternTable event_name_iids_;
  InternTable arg_name_iids_;
  // Reused for every packet so steady-state writing does not allocate.
  perfetto::protos::TracePacket packet_;
  std::string serialized_;
};

}  // namespace tpusim::traces
