#pragma once

// One thread of control on a TensorCore: the core running its kernel or program, or an
// activity it spawned (an XLA-style async collective). It implements base::CorePort, the
// one interface the DSL reaches the model through. Blocking calls (waits, compute) are
// SystemC waits inside the thread; everything else is a call into the chip's modules.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <systemc>

#include "base/engine.h"
#include "sim/base_names.h"
#include "sim/memory_stream.h"
#include "sim/resume_point.h"
#include "sim/semaphore.h"
#include "sim/systemc_context.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class DmaEngine;
class SliceState;
class TensorCore;

class CoreThread final : public CorePort {
 public:
  // The core's own thread (root == nullptr), or an activity it spawned, on `track`.
  CoreThread(SliceState& slice, TensorCore& core, traces::TrackId track, CoreThread* root = nullptr,
             std::string name = "");
  CoreThread(const CoreThread&) = delete;
  CoreThread& operator=(const CoreThread&) = delete;

  ChipId chip() const override;
  bool functional() const override;
  // The core's own time: ahead of the model's while it polls (see Read).
  Picoseconds Now() const override;
  double clock_hz() const override;

  void StartDma(const DmaRequest& request) override;
  void Wait(SemaphoreHandle handle, int64_t amount, WaitKind kind, std::string_view what) override;
  void Signal(SemaphoreHandle handle, int64_t amount) override;
  int64_t Read(SemaphoreHandle handle) override;
  int64_t Peek(SemaphoreHandle handle) const override;
  std::string SemaphoreName(SemaphoreHandle handle) const override;
  SemaphoreKind KindOf(SemaphoreHandle handle) const override;
  void Execute(const Work& work, std::string_view what) override;
  void Compute(ComputeUnit unit, uint64_t cycles, std::string_view what) override;
  using CorePort::BeginScope;
  void BeginScope(std::string_view name, const ScopeDetails& details) override;
  void EndScope() override;
  void Load(const Region& region, void* out, std::string_view what) override;
  void Store(const Region& region, const void* in, std::string_view what) override;
  [[noreturn]] void ReportRace(const RaceReport& race) override;
  BufferHandle Allocate(MemorySpace space, uint64_t bytes, const std::string& label,
                        Uninitialized fill) override;
  void Free(BufferHandle buffer) override;
  SemaphoreHandle AddSemaphore(SemaphoreKind kind, const std::string& name) override;
  ActivityId Spawn(const std::string& name, std::function<void(CorePort&)> body) override;
  ActivityId SpawnOnCore(int core, const std::string& name,
                         std::function<void(CorePort&)> body) override;
  int num_cores() const override;
  int core_index() const override;
  void YieldToSameTime() override;
  void Join(ActivityId activity) override;

  // The TensorCore it runs on.
  TensorCore& core() const { return core_; }
  // Runs the program (or a spawned activity's body); failures are recorded and stop the
  // simulation.
  void Body(const Engine::CoreProgram& program);
  // After a failure: ends the slices this thread still has open, so the trace stays valid
  // up to the failure and shows where the thread stood.
  void CloseTrace(Picoseconds now, const std::string& why);
  // Wakes the thread if it waits on `s` and `s` now holds enough. `last_woken` is the
  // slice's record of the thread woken last, which resumes after this one (ResumePoint).
  void Poke(const Semaphore& s, ResumePoint& last_woken) {
    if (waiting_ == &s && s.value() >= wait_amount_) {
      events_->wake.notify(sc_core::SC_ZERO_TIME);
      PrefetchResume();
      next_resumed_ = last_woken;
      last_woken = resume_point();
    }
  }

  bool finished() const { return finished_; }
  bool started() const { return started_; }
  const CoreThread* joining() const { return joining_; }
  const std::string& name() const { return name_; }
  const Semaphore* waiting() const { return waiting_; }
  const Semaphore* polling() const { return polling_; }
  uint64_t poll_reads() const { return poll_reads_; }
  int64_t wait_amount() const { return wait_amount_; }
  WaitKind wait_kind() const { return wait_kind_; }
  const std::string& wait_what() const { return wait_what_; }
  const CoreStats& stats() const { return stats_; }
  // A spawned thread shown on its core's own track (a megacore core's share of a grid).
  bool on_core_track() const { return track_slot_ == kCoreTrackSlot; }
  // An activity's slot among its chip's async tracks.
  size_t track_slot() const { return track_slot_; }
  void set_track_slot(size_t slot) { track_slot_ = slot; }

 private:
  // Waits out the reads the core ran ahead by, before it does anything the model sees.
  void CatchUp();
  void WaitOutReads();  // the same, between reads: the core is still polling
  bool SpinCannotEnd() const;
  // Holds `unit` (the scalar unit: the core itself) for `duration`, waiting for it first if
  // another thread of the chip has it; `cycles`, when known, go to the trace.
  void Occupy(ComputeUnit unit, Picoseconds duration, std::string_view what, uint64_t cycles);
  // The chip's slowdown (EngineOptions::chip_slowdown) applied to the core's own work: a
  // duration, or `cycles` of the chip's clock. Work the slowdown would take past what
  // simulated time can count is Error(kInvalidArgument) naming the chip and `what`.
  double Slowdown() const;
  Picoseconds Slowed(Picoseconds duration, std::string_view what) const;
  Picoseconds SlowedCycles(uint64_t cycles, std::string_view what) const;
  [[noreturn]] void TooLong(double picoseconds, std::string_view what,
                            const std::string& unslowed) const;
  // Streams `bytes` of the work's HBM traffic through the chip's HBM port (sim/memory_stream.h)
  // beside whatever the core does next; AwaitStream waits until it is done.
  void StartStream(uint64_t bytes, double bytes_per_second, std::string_view what);
  void AwaitStream();
  void CheckAccess(const Region& region, const char* role, std::string_view what) const;
  ActivityId SpawnOn(TensorCore& core, const std::string& name,
                     std::function<void(CorePort&)> body);
  // track_slot_ of an activity drawn on its core's own track rather than an async one.
  static constexpr size_t kCoreTrackSlot = ~size_t{0};

  SliceState& slice_;
  TensorCore& core_;
  ChipId chip_;
  uint32_t core_index_;  // core_'s index
  // The chip's DMA engine, set when the thread starts (the chip makes it after its cores):
  // reached through core_ and the chip, a chain of loads that missed the cache on every DMA
  // of a large slice.
  DmaEngine* dma_ = nullptr;
  traces::TrackId track_;
  CoreThread* root_;  // the core that spawned this activity; nullptr for the core itself
  std::string name_;  // an activity's name
  size_t track_slot_ = 0;
  TensorCore* track_keeper_ = nullptr;  // whose async tracks track_slot_ numbers
  int unjoined_ = 0;
  bool joined_ = false;
  const CoreThread* joining_ = nullptr;
  traces::TrackId computing_on_ = 0;  // the MXU/VPU track of a compute in progress
  // Made once the simulation runs (MakeEvents): SystemC names an event made before, with a
  // generated name, and files it in its object table, three per core thread of a slice.
  struct Events {
    sc_core::sc_event done;      // an activity finished
    sc_core::sc_event wake;      // a semaphore it waits on holds enough
    sc_core::sc_event streamed;  // its work's HBM traffic is done
  };
  void MakeEvents() {
    if (!events_ && sc_core::sc_is_running()) events_.emplace();
  }
  std::optional<Events> events_;
  std::unique_ptr<MemoryStream> stream_;
  ThreadStack stack_;
  Picoseconds read_cost_ = 0;
  Picoseconds ahead_ = 0;    // reads done but not yet waited out
  Picoseconds horizon_ = 0;  // no event anywhere before this time (while ahead_ > 0)
  const Semaphore* polling_ = nullptr;
  uint64_t poll_reads_ = 0;  // since the core last did anything else
  // Asks for what the thread reads first when it resumes from Wait, once it is made
  // runnable: on a pod every other chip's work has run since it blocked, so each is a miss,
  // and asked for here the misses overlap the calendar's other events and the other
  // threads' work. Seven lines (PrefetchResumeLines): more stall the calendar on the core's
  // few outstanding misses.
  void PrefetchResume() const { PrefetchResumeLines(resume_point()); }
  // Asks for the resume lines of the thread that resumes after this one. A delta's woken
  // threads resume in the reverse of the order they were woken (SystemC 2.3's `crunch`
  // triggers a delta's events from the last), so that is the thread woken just before this
  // one. On a pod a delta wakes thousands of threads, and the lines asked for when each was
  // woken are gone by the time most of them run; asked for again as the thread before it
  // resumes, they arrive while that thread works.
  void PrefetchNextResumed() {
    if (next_resumed_.thread == nullptr) return;
    PrefetchResumeLines(next_resumed_);
    next_resumed_ = {};
  }
  // What a thread reads first when it resumes from Wait: the coroutine switch's saved
  // registers and the SystemC frames just below Wait's stack pointer, Wait's saved registers
  // and return address at its frame, and the thread's vtable (the DSL calls it through
  // CorePort) and wait state.
  static void PrefetchResumeLines(const ResumePoint& at) {
    __builtin_prefetch(at.sp - 0x88);
    __builtin_prefetch(at.sp - 0x48);
    __builtin_prefetch(at.sp - 0x08);
    __builtin_prefetch(at.frame - 0x30);
    __builtin_prefetch(at.frame + 0x10);
    __builtin_prefetch(at.thread);
    __builtin_prefetch(at.wait_state);
  }
  ResumePoint resume_point() const { return {resume_sp_, resume_frame_, this, &waiting_}; }
  // Wait's stack pointer and frame while the thread is blocked in it (set whenever waiting_
  // is): RecordResumePoint. On one line with the wait state and next_resumed_, which a
  // resume reads first.
  alignas(64) const char* resume_sp_ = nullptr;
  const char* resume_frame_ = nullptr;
  [[gnu::always_inline]] void RecordResumePoint() {
    resume_frame_ = static_cast<const char*>(__builtin_frame_address(0));
#if defined(__x86_64__)
    asm("mov %%rsp, %0" : "=r"(resume_sp_));
#else
    resume_sp_ = resume_frame_;
#endif
  }
  const Semaphore* waiting_ = nullptr;
  int64_t wait_amount_ = 0;
  ResumePoint next_resumed_;
  WaitKind wait_kind_ = WaitKind::kSemaphore;
  std::string wait_what_;
  int open_scopes_ = 0;
  bool started_ = false;
  bool finished_ = false;
  CoreStats stats_;
};

}  // namespace tpusim::sim
