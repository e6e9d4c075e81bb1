#pragma once

// What the modules of one slice share about the slice itself: its topology and torus, the
// calendar that DMA chunks and signals are scheduled on, the chips and where each chip's
// semaphores are (the chips own them), every thread of control, and the routing facts a
// signal needs. What belongs to the run as a whole (options, trace, host limits, first
// failure, stats) is the RunContext it owns (run(), sim/run_context.h). Whoever observes
// the model's accesses, the race checker when races are checked, is attached here
// (observer(), sim/access_observer.h); the modules only report to it. The Slice owns the
// state; modules hold a reference, so a test can build one chip's modules on their own.

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/engine.h"
#include "sim/access_observer.h"
#include "sim/base_names.h"
#include "sim/event_queue.h"
#include "sim/hot_arena.h"
#include "sim/resume_point.h"
#include "sim/run_context.h"
#include "sim/semaphore.h"
#include "sim/semaphore_table.h"
#include "sim/torus.h"
#include "topologies/topology.pb.h"

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

  // The run this slice runs: options, trace, host limits, failure, stats.
  RunContext& run() { return run_; }
  const RunContext& run() const { return run_; }

  const config::Topology& topology() const { return topology_; }
  const Torus& torus() const { return torus_; }
  EventQueue& calendar() { return *calendar_; }
  // Who is told of the model's accesses and synchronisations; null when nobody listens
  // (the Slice attaches the race checker to functional runs with race_check).
  AccessObserver* observer() { return observer_.get(); }
  void Observe(std::unique_ptr<AccessObserver> observer) { observer_ = std::move(observer); }
  // Fails the run with a race found by the race checker or by the DSL, named by chip, core
  // and buffer, and marks both accesses in the trace. Throws Error(kRace).
  [[noreturn]] void ReportRace(const RaceReport& race);

  // The chips, as the Slice registers them, for lookups by handle. Their memories count
  // their frees in buffer_frees().
  void AddChip(Chip& chip);
  Chip& chip(ChipId id) { return *chips_[id]; }
  const Chip& chip(ChipId id) const { return *chips_[id]; }
  uint32_t chips() const { return static_cast<uint32_t>(chips_.size()); }
  Memory& memory(const BufferHandle& b);
  // How many remembered buffers (Memory::NoteRemembered) the slice's memories have freed:
  // what a DMA engine remembers of a live buffer holds while this stays the same
  // (sim/dma_buffer_cache.h).
  uint64_t buffer_frees() const { return buffer_frees_; }
  // Each chip's semaphores and waiters are its own (ChipSemaphores): a chip takes them when
  // it is made, before its cores; the slice made them all together and finds them by chip.
  ChipSemaphores& TakeChipSemaphores(ChipId chip) { return by_chip_[chip]; }
  SemaphoreTable& semaphores(ChipId chip) { return by_chip_[chip].semaphores; }
  const SemaphoreTable& semaphores(ChipId chip) const { return by_chip_[chip].semaphores; }
  Semaphore& semaphore(SemaphoreHandle h) { return by_chip_[h.chip].semaphores[h.index]; }
  // The chip's threads of control in the order they were made: the core, then its live
  // activities.
  std::vector<CoreThread*>& waiters(ChipId chip) { return by_chip_[chip].waiters; }
  // Whether the handle names a live buffer: its chip and core exist, an HBM handle names core
  // 0 (a chip has one HBM), and the buffer was allocated and not freed.
  bool BufferExists(const BufferHandle& b) const;
  // Throw Error naming `what` unless BufferExists(b).
  void CheckBuffer(const BufferHandle& b, const char* role, const std::string& what);
  bool HasSemaphore(SemaphoreHandle h) const {
    return h.chip < chips() && h.index < semaphores(h.chip).size();
  }
  // Throws unless HasSemaphore(h). `what` names the operation; its text is copied only when
  // the check fails.
  void CheckSemaphore(SemaphoreHandle h, const char* role, std::string_view what);
  // A signal from `issuer`'s core: on its own chip at once; on another chip it crosses the
  // links of its route as a small transaction (Router::SendSignal) and changes the semaphore
  // the signal latency after it reaches that chip.
  void Signal(ChipId issuer, SemaphoreHandle target, int64_t amount, uint32_t issuer_core = 0);
  // Sends a signal packet from `from`'s router at `at` along the route to `target`'s chip
  // (another chip) and returns when the semaphore there can change: the packet's arrival
  // plus the signal latency. A remote semaphore_signal and a zero-byte DMA's notice both
  // travel so.
  Picoseconds SendRemoteSignal(ChipId from, SemaphoreHandle target, Picoseconds at,
                               const std::string* label);
  // Adds to a semaphore now and wakes the threads waiting on it; traces its counter. One
  // that would pass INT64_MAX fails the run instead (false).
  bool AddToSemaphore(SemaphoreHandle h, int64_t amount, const Touch* touch) {
    return AddToSemaphore(semaphore(h), h, amount, touch);
  }
  // The same for the semaphore `h` names, already found (a DMA finds its semaphores once, not
  // per chunk: the lookup walks the chip's deque, a cache miss or two on a pod).
  bool AddToSemaphore(Semaphore& s, const SemaphoreHandle& h, int64_t amount, const Touch* touch);
  // Pokes each of the chip's threads, for a semaphore that more than one may wait on.
  [[gnu::noinline]] void WakeWaiters(Semaphore& s, ChipId chip);
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

  // The run met a limit of its HostWatch: fails it with the watch's kind and a report of
  // where each thread of control stood.
  void FailOnHostLimit();

  // `name`, kept once for the slice at a stable address: every chip's kernel makes
  // semaphores of the same names ("send_sems[13]"), over a hundred per device on a pod.
  const std::string& SemaphoreName(const std::string& name) {
    return *semaphore_names_.insert(name).first;
  }

 private:
  std::unordered_set<std::string> semaphore_names_;  // outlives the semaphores (hot_)
  HotArena hot_;  // first in, last out: modules and the calendar refer to what it holds
  config::Topology topology_;
  RunContext run_;
  Torus torus_;
  std::unique_ptr<EventQueue> calendar_;
  std::unique_ptr<AccessObserver> observer_;
  std::vector<traces::TrackId> race_tracks_;  // by chip, added at the first race there
  std::vector<Chip*> chips_;
  ChipSemaphores* by_chip_ = nullptr;  // each chip's own, by chip, in the hot arena
  uint64_t buffer_frees_ = 0;
  size_t live_threads_ = 0;  // threads of control (ThreadBudget)
  ResumePoint last_woken_;   // CoreThread::Poke's, for the next thread it wakes
  Picoseconds signal_latency_;
  bool store_and_forward_;

  std::vector<CoreThread*> cores_;
  std::deque<std::unique_ptr<CoreThread>> activities_;
};

}  // namespace tpusim::sim
