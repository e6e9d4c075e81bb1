#pragma once

// Writes the Chrome JSON trace format ({"traceEvents":[...]}), the fallback for tools
// that cannot read Perfetto protobuf. Events are streamed as they come, one per line.
//
// The format knows only processes and threads, so each process track becomes a process
// (pid), and every slice track below it, however deep, becomes a thread of that process
// named by its path below the process ("core 0/dma"). Events on the process track itself
// go to the process's main thread (tid == pid). Counter tracks become "C" events of the
// process, named by their path below it. pids and tids are drawn from one counter so no
// tid is ever reused across processes. Timestamps are microseconds, written exactly from
// the picosecond input (up to six decimals).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "traces/trace_output.h"
#include "traces/trace_sink.h"
#include "traces/track_table.h"

namespace tpusim::traces {

class ChromeJsonWriter final : public TraceSink {
 public:
  // Writes to `out`, which must outlive the writer.
  explicit ChromeJsonWriter(std::ostream& out);
  // Owns `out`; `destination` (usually the file path) names it in error messages.
  ChromeJsonWriter(std::unique_ptr<std::ostream> out, std::string destination);
  // Finishes if Finish was not called, swallowing errors: call Finish to see them.
  ~ChromeJsonWriter() override;

  ChromeJsonWriter(const ChromeJsonWriter&) = delete;
  ChromeJsonWriter& operator=(const ChromeJsonWriter&) = delete;

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

  // Closes the JSON document and flushes. Throws TraceError if any write failed. Later
  // calls are no-ops; recording after Finish throws TraceError.
  void Finish() override;

 private:
  void RequireOpen(std::string_view operation) const;
  // Starts a new element of the traceEvents array in line_.
  void StartEvent();
  // Appends an "M" event; `tid` 0 makes it describe the process rather than a thread.
  void AppendNameMetadata(std::string_view kind, int64_t pid, int64_t tid, std::string_view name);
  void AppendSortMetadata(std::string_view kind, int64_t pid, int64_t tid, int rank);
  void AppendEventStart(std::string_view phase, const internal::TrackInfo& track, uint64_t ts_ps);
  void AppendFlows(const internal::TrackInfo& track, uint64_t ts_ps, FlowId flow_out,
                   FlowId flow_in);
  // The track's path below its process: "core 0/dma" for "chip 0/core 0/dma".
  std::string_view PathBelowProcess(const internal::TrackInfo& track) const;

  internal::TraceOutput output_;
  internal::TrackTable tracks_;
  // thread_ids_[id - 1]: the tid of a slice track, the pid of a process track, 0 for
  // counter tracks (which belong to the process, not a thread).
  std::vector<int64_t> thread_ids_;
  int64_t next_thread_id_ = 1;
  bool finished_ = false;
  bool wrote_event_ = false;
  std::string line_;  // reused so steady-state writing does not allocate
};

}  // namespace tpusim::traces
