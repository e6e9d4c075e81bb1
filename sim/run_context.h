#pragma once

// What belongs to one run as a whole, not to the hardware it runs on: the options it was
// started with, the name of what runs, the trace it writes, the host's limits it polls,
// its first failure, the counters it reports, and the ids and names its trace events share.
// The slice's hardware and its bookkeeping (the torus, the calendar, the chips and their
// semaphores, the threads of control) are SliceState's (sim/slice_state.h), which owns one
// of these; a module that needs only the run's facts takes a RunContext.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "base/engine.h"
#include "sim/base_names.h"
#include "sim/host_watch.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class RunContext {
 public:
  explicit RunContext(EngineOptions options);
  // The watch keeps a pointer into the options: the context stays where it was made.
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  const EngineOptions& options() const { return options_; }
  bool functional() const { return options_.functional; }
  // What runs (the kernel's or the program's name): each core's top-level slice.
  const std::string& run_name() const { return run_name_; }
  void set_run_name(std::string name) { run_name_ = std::move(name); }

  traces::TraceSink& trace() { return *trace_; }
  // Building trace names and arguments costs allocations; skip it when nothing records.
  bool traced() const { return trace_ != &null_trace_; }
  // Whether a trace was asked for at all (semaphore counter tracks are only worth it then).
  bool trace_requested() const { return options_.trace != nullptr; }
  // A name for a port's trace that lives as long as the run (the ports keep pointers).
  const std::string& Label(std::string_view text) { return *labels_.emplace(text).first; }
  uint64_t NewFlow() { return next_flow_++; }
  // Tells a core's own HBM traffic (sim/memory_stream.h) from DMAs on a port's trace.
  uint64_t NewStreamId() { return kStreamIds | next_stream_++; }

  // The wall-clock limit and the caller's interrupt, which the calendar and the cores poll.
  HostWatch& watch() { return watch_; }
  const HostWatch& watch() const { return watch_; }

  // The first failure of the run stops the simulation; later ones are its consequences.
  void Fail(ErrorKind kind, const std::string& message);
  bool failed() const { return failed_; }
  ErrorKind error_kind() const { return error_kind_; }
  const std::string& error() const { return error_; }

  RunStats& stats() { return stats_; }

 private:
  EngineOptions options_;
  std::string run_name_ = "kernel";
  traces::NullTraceSink null_trace_;
  traces::TraceSink* trace_;
  HostWatch watch_;  // after options_, whose interrupt check it keeps a pointer to
  RunStats stats_;
  uint64_t next_flow_ = 1;
  static constexpr uint64_t kStreamIds = uint64_t{1} << 63;  // DMAs count up from 1
  uint64_t next_stream_ = 1;
  std::set<std::string, std::less<>> labels_;
  bool failed_ = false;
  ErrorKind error_kind_ = ErrorKind::kKernelMisuse;
  std::string error_;
};

}  // namespace tpusim::sim
