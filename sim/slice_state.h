#pragma once

// What every module of one slice shares: the options of the run, the torus, the calendar
// that DMA chunks and signals are scheduled on, the trace, the race detector, the ledger of
// DMAs, every thread of control, and the run's first failure, and where each chip's
// semaphores are (the chips own them). The Slice owns it; modules hold a reference, so a
// test can build one chip's modules on their own.

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/engine.h"
#include "sim/base_names.h"
#include "sim/event_queue.h"
#include "sim/host_watch.h"
#include "sim/hot_arena.h"
#include "sim/race_detector.h"
#include "sim/semaphore.h"
#include "sim/thread_budget.h"
#include "sim/torus.h"
#include "topologies/topology.pb.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class Chip;
class CoreThread;
class Memory;

class SliceState {
 public:
  // Must be built inside a fresh SystemC context (the calendar spawns a method).
  SliceState(const config::Topology& topology, EngineOptions options);
  ~SliceState();
  SliceState(const SliceState&) = delete;
  SliceState& operator=(const SliceState&) = delete;

  const config::Topology& topology() const { return topology_; }
  const EngineOptions& options() const { return options_; }
  bool functional() const { return options_.functional; }
  // What runs (the kernel's or the program's name): each core's top-level slice.
  const std::string& run_name() const { return run_name_; }
  void set_run_name(std::string name) { run_name_ = std::move(name); }
  const Torus& torus() const { return torus_; }
  EventQueue& calendar() { return *calendar_; }
  HostWatch& watch() { return watch_; }
  const HostWatch& watch() const { return watch_; }
  traces::TraceSink& trace() { return *trace_; }
  // Building trace names and arguments costs allocations; skip it when nothing records.
  bool traced() const { return trace_ != &null_trace_; }
  // Whether a trace was asked for at all (semaphore counter tracks are only worth it then).
  bool trace_requested() const { return options_.trace != nullptr; }
  // Happens-before checking (functional runs with race_check); null otherwise.
  RaceDetector* races() { return races_.get(); }
  [[noreturn]] void ReportRace(const RaceDetector::Race& race);

  // The chips, as the Slice registers them, for lookups by handle.
  void AddChip(Chip& chip) { chips_.push_back(&chip); }
  Chip& chip(ChipId id) { return *chips_[id]; }
  const Chip& chip(ChipId id) const { return *chips_[id]; }
  uint32_t chips() const { return static_cast<uint32_t>(chips_.size()); }
  Memory& memory(const BufferHandle& b);
  // Each chip's semaphores and waiters are its own (ChipSemaphores): a chip takes them when
  // it is made, before its cores; the slice made them all together and finds them by chip.
  ChipSemaphores& TakeChipSemaphores(ChipId chip) { return *by_chip_[chip]; }
  std::deque<Semaphore>& semaphores(ChipId chip) { return by_chip_[chip]->semaphores; }
  const std::deque<Semaphore>& semaphores(ChipId chip) const { return by_chip_[chip]->semaphores; }
  Semaphore& semaphore(SemaphoreHandle h) { return by_chip_[h.chip]->semaphores[h.index]; }
  // The chip's threads of control in the order they were made: the core, then its live
  // activities.
  std::vector<CoreThread*>& waiters(ChipId chip) { return by_chip_[chip]->waiters; }
  // Throw Error naming `what` when the handle names nothing (freed, never made, off-slice).
  void CheckBuffer(const BufferHandle& b, const char* role, const std::string& what);
  void CheckSemaphore(SemaphoreHandle h, const char* role, const std::string& what);
  // A signal from `issuer`'s core: on its own chip at once; on another chip it crosses the
  // links of its route as a small transaction (Router::SendSignal) and changes the semaphore
  // the signal latency after it reaches that chip.
  void Signal(ChipId issuer, SemaphoreHandle target, int64_t amount, uint32_t issuer_core = 0);
  // Adds to a semaphore now and wakes the threads waiting on it; traces its counter. One
  // that would pass INT64_MAX fails the run instead (false).
  bool AddToSemaphore(SemaphoreHandle h, int64_t amount, const Touch* touch) {
    return AddToSemaphore(semaphore(h), h, amount, touch);
  }
  // The same for the semaphore `h` names, already found (a DMA finds its semaphores once, not
  // per chunk: the lookup walks the chip's deque, a cache miss or two on a pod).
  bool AddToSemaphore(Semaphore& s, const SemaphoreHandle& h, int64_t amount, const Touch* touch);
  // Its rare path, kept out of line so that the hot one stays lean.
  [[gnu::cold, gnu::noinline]] void FailSemaphoreOverflow(SemaphoreHandle h, int64_t amount,
                                                          const Touch* touch);
  // Where the state every chunk or wake-up touches is made (sim/hot_arena.h).
  HotArena& hot() { return hot_; }
  // What a semaphore on another chip takes to change, beyond the hops (ici.signal_latency_ns).
  Picoseconds signal_latency() const { return signal_latency_; }
  // Whether routers take in a whole chunk before passing it on (ici.forwarding).
  bool store_and_forward() const { return store_and_forward_; }

  // Every thread of control: the chips' cores in chip order, then activities as spawned
  // (an ActivityId indexes activities()).
  std::vector<CoreThread*>& cores() { return cores_; }
  const std::vector<CoreThread*>& cores() const { return cores_; }
  // Threads of control: every core's, before any starts, then one more for each activity;
  // a thread that ends gives its place back. Throws Error(kCapacity) when they would not fit
  // (sim/thread_budget.h).
  void TakeCoreThreads();
  void TakeActivityThread();
  void ReturnThread() { --live_threads_; }
  std::deque<std::unique_ptr<CoreThread>>& activities() { return activities_; }
  const std::deque<std::unique_ptr<CoreThread>>& activities() const { return activities_; }

  // The first failure of the run stops the simulation; later ones are its consequences.
  void Fail(ErrorKind kind, const std::string& message);
  // The run met a limit of its HostWatch: fails it with the watch's kind and report.
  void FailOnHostLimit();
  bool failed() const { return failed_; }
  ErrorKind error_kind() const { return error_kind_; }
  const std::string& error() const { return error_; }

  RunStats& stats() { return stats_; }
  uint64_t NewFlow() { return next_flow_++; }
  // A name for a port's trace that lives as long as the run (the ports keep pointers).
  const std::string& Label(std::string_view text) { return *labels_.emplace(text).first; }
  // Tells a core's own HBM traffic (sim/memory_stream.h) from DMAs on a port's trace.
  uint64_t NewStreamId() { return kStreamIds | next_stream_++; }

 private:
  HotArena hot_;  // first in, last out: modules and the calendar refer to what it holds
  config::Topology topology_;
  EngineOptions options_;
  std::string run_name_ = "kernel";
  Torus torus_;
  traces::NullTraceSink null_trace_;
  traces::TraceSink* trace_;
  HostWatch watch_;  // after options_, whose interrupt check it keeps a pointer to
  std::unique_ptr<EventQueue> calendar_;
  std::unique_ptr<RaceDetector> races_;
  std::vector<traces::TrackId> race_tracks_;  // by chip, added at the first race there
  std::vector<Chip*> chips_;
  std::vector<ChipSemaphores*> by_chip_;  // each chip's own, by chip
  ThreadBudget thread_budget_{0, 0};      // measured when the run starts
  size_t live_threads_ = 0;
  Picoseconds signal_latency_;
  bool store_and_forward_;

  std::vector<CoreThread*> cores_;
  std::deque<std::unique_ptr<CoreThread>> activities_;
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
