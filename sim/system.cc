#include "sim/system.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <sstream>
#include <unordered_map>
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include "sim/bandwidth_port.h"
#include "sim/event_queue.h"
#include "sim/memory.h"
#include "sim/race_detector.h"
#include "sim/systemc_context.h"

namespace tpusim::sim {

namespace {

// What last changed a semaphore, for deadlock and exit reports.
struct Touch {
  Picoseconds when = 0;
  ChipId from = 0;
  int64_t amount = 0;
  std::string what;  // "DMA 'ag step 1'" or "signal"
};

struct Semaphore {
  std::string name;
  SemaphoreKind kind;
  int64_t value = 0;
  std::vector<Touch> recent;  // newest last, at most kRecentTouches; no allocation until used
  traces::TrackId counter_track = 0;
};
constexpr size_t kRecentTouches = 3;
constexpr size_t kThreadStackBytes = 512 * 1024;  // kernels call host numerics on this stack

// What semaphore_read costs the core: a scalar load of the semaphore's sync flag. No public
// figure; modelled as a few cycles of the chip clock, like a scalar-memory load.
constexpr uint64_t kSemaphoreReadCycles = 4;
// Once nothing is pending anywhere (every other core finished or blocked, no DMA or signal
// in flight), no semaphore can change while a core only reads. A core that goes on reading
// this many times is spinning forever: report it at once instead of at the time limit.
// (A loop that gives up after fewer reads runs on as before.)
constexpr uint64_t kProvenSpinReads = uint64_t{1} << 20;

// The trace tracks of one chip, in the fixed order DESIGN.md gives.
struct ChipTracks {
  traces::TrackId chip = 0;
  traces::TrackId core = 0;
  traces::TrackId mxu = 0;
  traces::TrackId vpu = 0;
  std::vector<traces::TrackId> dma_engines;
  traces::TrackId dma_arrivals = 0;
  traces::TrackId hbm = 0;
  traces::TrackId vmem = 0;
  traces::TrackId smem = 0;
  std::vector<traces::TrackId> links;  // by position in Torus::LinksFrom
  traces::TrackId bytes_in_flight = 0;
};

struct Hop {
  BandwidthPort* port;
  uint32_t multiplier;  // a copy within one memory reads and writes through the same port
  bool link;
};

struct Transfer {
  uint64_t id = 0;
  ChipId issuer = 0;
  DmaRequest request;
  uint64_t bytes = 0;
  uint64_t sent = 0;
  uint64_t landed = 0;
  std::vector<Hop> hops;  // source memory, links in route order, destination memory
  uint64_t reserved = 0;
  Picoseconds latency = 0;
  int hop_count = 0;
  int engine = -1;
  traces::FlowId flow = 0;
  uint32_t race_id = 0;  // the race detector's name for it
  std::vector<uint8_t> staging;
};

}  // namespace

class System::Impl {
 public:
  class Core;

  Impl(const config::Topology& topology, SystemOptions options);
  ~Impl();

  Memory& memory(ChipId chip, MemorySpace space) {
    return *memories_[static_cast<size_t>(chip) * 3 + static_cast<int>(space)];
  }
  Memory& memory(const BufferHandle& b) { return memory(b.chip, b.space); }
  Semaphore& semaphore(SemaphoreHandle h) { return semaphores_[h.chip][h.index]; }
  void CheckBuffer(const BufferHandle& b, const char* role, const std::string& what);
  void CheckSemaphore(SemaphoreHandle h, const char* role, const std::string& what);

  void StartDma(ChipId issuer, const DmaRequest& request);
  void FreeBuffer(ChipId issuer, BufferHandle buffer);
  // Two in-flight DMAs writing the same bytes: which one lands last is a race.
  void CheckWriteRace(Transfer& t);
  static uint64_t BufferKey(const BufferHandle& b);
  void Signal(ChipId issuer, SemaphoreHandle target, int64_t amount);
  void AddToSemaphore(SemaphoreHandle h, int64_t amount, const Touch* touch);

  void Fail(ErrorKind kind, const std::string& message);
  [[noreturn]] void ReportRace(const RaceDetector::Race& race);
  SemaphoreHandle NewSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name);
  RunOutcome Run(const CoreProgram& program);

  // The DMA pipeline: engine admission, chunk reservation, departure and landing.
  void Admit(ChipId chip);
  void BeginTransfer(Transfer& t, int engine);
  void ReserveChunk(Transfer& t);
  void OnDeparted(Transfer& t, uint64_t bytes);
  void OnLanded(Transfer& t, uint64_t bytes);
  void BytesInFlight(ChipId chip, int64_t delta);
  // Chunk events go to the calendar as a plain function and two integers (no allocation).
  enum ChunkEvent : uint64_t { kDeparted, kDepartedThenReserve, kReserve, kLanded };
  void Schedule(Picoseconds when, ChunkEvent event, Transfer& t, uint64_t bytes = 0);
  static void RunChunkEvent(void* impl, uint64_t transfer, uint64_t event_and_bytes);

  std::string DescribeWaiters() const;
  std::string DeadlockReport() const;
  std::string SpinReport(Picoseconds now) const;
  void CheckSemaphoresAtExit();
  std::string RecentTouches(const Semaphore& s) const;

  config::Topology topology_;
  SystemOptions options_;
  Torus torus_;
  traces::NullTraceSink null_trace_;
  traces::TraceSink* trace_;
  SystemCContext systemc_;  // before every SystemC object of the run, so it outlives them
  std::unique_ptr<EventQueue> events_;
  std::vector<ChipTracks> tracks_;
  std::vector<std::unique_ptr<Memory>> memories_;
  std::vector<std::unique_ptr<BandwidthPort>> links_;  // by LinkId
  std::vector<std::deque<Semaphore>> semaphores_;      // by chip; stable while kernels add more
  std::vector<std::unique_ptr<Core>> cores_;
  // Spawned activities (CorePort::Spawn), by ActivityId; and, by chip, every thread of
  // control a semaphore change may wake (the core, then its live activities).
  std::deque<std::unique_ptr<Core>> activities_;
  std::vector<std::vector<Core*>> waiters_;
  std::vector<std::vector<std::pair<traces::TrackId, bool>>> activity_tracks_;  // by chip: busy?
  std::vector<std::array<Picoseconds, 2>> unit_free_;  // by chip: when the MXU / VPU frees up
  std::deque<Transfer> transfers_;                // stable addresses; labels outlive trace flushing
  size_t settled_transfers_ = 0;                  // transfers_[0, this) have all landed
  std::vector<std::deque<Transfer*>> dma_queue_;  // by chip, waiting for an engine
  std::vector<std::vector<bool>> engine_busy_;    // by chip
  std::vector<int64_t> bytes_in_flight_;          // by chip, outbound
  std::unique_ptr<RaceDetector> races_;           // functional runs with race_check only
  std::vector<traces::TrackId> race_tracks_;      // by chip, added at the first race there
  Picoseconds hop_latency_ = 0;
  uint64_t chunk_bytes_ = 0;
  uint64_t next_flow_ = 1;
  RunStats stats_;
  std::unordered_map<uint64_t, std::vector<const Transfer*>> writers_;  // in flight, by buffer
  bool ran_ = false;
  bool failed_ = false;
  ErrorKind error_kind_ = ErrorKind::kKernelMisuse;
  std::string error_;
};

class System::Impl::Core final : public CorePort {
 public:
  // A core's own thread (root == nullptr), or an activity it spawned, on `track`.
  Core(Impl& system, ChipId chip, traces::TrackId track, Core* root = nullptr,
       std::string name = "")
      : system_(system),
        chip_(chip),
        track_(track),
        root_(root),
        name_(std::move(name)),
        read_cost_(CyclesToTime(kSemaphoreReadCycles, system.topology_.chip().clock_hz())) {}

  ChipId chip() const override { return chip_; }
  bool functional() const override { return system_.options_.functional; }
  // The core's own time: ahead of the model's while it polls (see Read).
  Picoseconds Now() const override { return EventQueue::Now() + ahead_; }
  double clock_hz() const override { return system_.topology_.chip().clock_hz(); }

  void StartDma(const DmaRequest& request) override {
    CatchUp();
    system_.StartDma(chip_, request);
  }

  void Wait(SemaphoreHandle handle, int64_t amount, WaitKind kind, std::string_view what) override {
    CatchUp();
    system_.CheckSemaphore(handle, "waited on", std::string(what));
    if (handle.chip != chip_) {
      throw Error(ErrorKind::kSemaphoreMisuse,
                  system_.torus_.Describe(chip_) + " waits on semaphore '" +
                      system_.semaphore(handle).name + "' of " +
                      system_.torus_.Describe(handle.chip) +
                      ", but a core can only wait on its own semaphores; wait on the local one "
                      "and let the other chip signal it.");
    }
    Semaphore& s = system_.semaphore(handle);
    const bool dma_wait = kind != WaitKind::kSemaphore;
    if (dma_wait != (s.kind == SemaphoreKind::kDma)) {
      throw Error(ErrorKind::kSemaphoreMisuse,
                  system_.torus_.Describe(chip_) + " calls " + WaitKindName(kind) + " on " +
                      SemaphoreKindName(s.kind) + " semaphore '" + s.name + "'. " +
                      (dma_wait ? "DMA descriptors need DMA semaphores; allocate it as "
                                  "SemaphoreType::DMA."
                                : "A DMA semaphore counts bytes and is waited on through its "
                                  "copy descriptor's wait/wait_send/wait_recv."));
    }
    if (amount <= 0) {
      throw Error(ErrorKind::kSemaphoreMisuse, system_.torus_.Describe(chip_) + " waits for " +
                                                   std::to_string(amount) + " on semaphore '" +
                                                   s.name + "'; the amount must be positive.");
    }
    if (s.value < amount) {
      const Picoseconds since = Now();
      if (system_.trace_ != &system_.null_trace_) {  // the name and arguments cost allocations
        system_.trace_->Begin(track_, since, std::string(WaitKindName(kind)) + " " + s.name,
                              {{"needs", amount}, {"has", s.value}});
      }
      waiting_ = &s;
      wait_amount_ = amount;
      wait_kind_ = kind;
      wait_what_ = what;
      while (s.value < amount) {
        sc_core::wait(wake_);
        stack_.Announce();
      }
      waiting_ = nullptr;
      stats_.blocked += Now() - since;
      system_.trace_->End(track_, Now());
    }
    if (system_.races_) system_.races_->Acquire(chip_, handle);
    s.value -= amount;
    if (s.counter_track)
      system_.trace_->Counter(s.counter_track, Now(), static_cast<double>(s.value));
  }

  void Signal(SemaphoreHandle handle, int64_t amount) override {
    CatchUp();
    system_.Signal(chip_, handle, amount);
  }

  // Each read costs kSemaphoreReadCycles. Reads before the next event anywhere in the model
  // cannot see a change, so the core runs ahead of SystemC time by their cost and waits
  // once, when something could happen or the time limit comes (temporal decoupling,
  // docs/references.md §8): a polling loop costs simulated time, not a thread switch per read.
  int64_t Read(SemaphoreHandle handle) override {
    system_.CheckSemaphore(handle, "read", "semaphore_read");
    const Semaphore& s = system_.semaphore(handle);
    if (ahead_ > 0 && EventQueue::Now() + ahead_ >= horizon_) CatchUp();
    if (ahead_ == 0) {
      const Picoseconds now = EventQueue::Now();
      const Picoseconds quiet = sc_core::sc_time_to_pending_activity().value();
      horizon_ = std::min(system_.options_.time_limit, quiet > kNever - now ? kNever : now + quiet);
      polling_ = &s;
      poll_reads_ = 0;
      nothing_pending_ = !sc_core::sc_pending_activity();
      if (system_.trace_ != &system_.null_trace_)  // the name costs an allocation
        system_.trace_->Begin(track_, now, "semaphore_read " + s.name);
    }
    polling_ = &s;  // the time-limit report names the semaphore read last
    ++poll_reads_;
    if (nothing_pending_ && poll_reads_ > kProvenSpinReads)
      throw Error(ErrorKind::kDeadlock, system_.SpinReport(Now()));
    ahead_ += read_cost_;
    // A core that polls until a value arrives has seen what was signalled before it.
    if (system_.races_ && handle.chip == chip_) system_.races_->Acquire(chip_, handle);
    return s.value;
  }
  int64_t Peek(SemaphoreHandle handle) const override {
    system_.CheckSemaphore(handle, "read", "semaphore_read");
    return system_.semaphore(handle).value;
  }
  std::string SemaphoreName(SemaphoreHandle handle) const override {
    return system_.semaphore(handle).name;
  }
  SemaphoreKind KindOf(SemaphoreHandle handle) const override {
    return system_.semaphore(handle).kind;
  }

  void Compute(ComputeUnit unit, uint64_t cycles, std::string_view what) override {
    CatchUp();
    double slowdown = 1.0;
    if (chip_ < system_.options_.chip_slowdown.size())
      slowdown = system_.options_.chip_slowdown[chip_];
    const Picoseconds duration =
        static_cast<Picoseconds>(static_cast<double>(CyclesToTime(cycles, clock_hz())) * slowdown);
    if (duration == 0) return;
    // A unit another activity of this chip is using: wait for it, then take it. The
    // scalar unit (per-step overhead) is the core's own and drawn on its track.
    traces::TrackId track = track_;
    if (unit != ComputeUnit::kScalar) {
      Picoseconds& free_at = system_.unit_free_[chip_][unit == ComputeUnit::kMxu ? 0 : 1];
      if (free_at > Now()) {
        const Picoseconds start = free_at;
        free_at = start + duration;
        sc_core::wait(sc_core::sc_time::from_value(start - Now()));
        stack_.Announce();
      } else {
        free_at = Now() + duration;
      }
      track = unit == ComputeUnit::kMxu ? system_.tracks_[chip_].mxu : system_.tracks_[chip_].vpu;
    }
    system_.trace_->Begin(track, Now(), what, {{"cycles", cycles}});
    computing_on_ = track;
    sc_core::wait(sc_core::sc_time::from_value(duration));
    computing_on_ = 0;
    stack_.Announce();
    system_.trace_->End(track, Now());
    if (unit == ComputeUnit::kMxu) stats_.mxu_busy += duration;
    if (unit == ComputeUnit::kVpu) stats_.vpu_busy += duration;
  }

  void BeginScope(std::string_view name) override {
    CatchUp();
    system_.trace_->Begin(track_, Now(), name);
    if (system_.races_) system_.races_->BeginScope(chip_, name);
    ++open_scopes_;
  }
  void EndScope() override {
    CatchUp();
    if (open_scopes_ == 0) return;
    --open_scopes_;
    if (system_.races_) system_.races_->EndScope(chip_);
    system_.trace_->End(track_, Now());
  }

  void Load(const Region& region, void* out, std::string_view what) override {
    CatchUp();
    CheckAccess(region, "loaded from", what);
    if (system_.races_) system_.races_->CoreAccess(chip_, region, false, what, Now());
    system_.memory(region.buffer)
        .Gather(region.buffer.index, region.box, static_cast<uint8_t*>(out));
  }
  void Store(const Region& region, const void* in, std::string_view what) override {
    CatchUp();
    CheckAccess(region, "stored to", what);
    if (system_.races_) system_.races_->CoreAccess(chip_, region, true, what, Now());
    system_.memory(region.buffer)
        .Scatter(region.buffer.index, region.box, static_cast<const uint8_t*>(in));
  }
  void CheckAccess(const Region& region, const char* role, std::string_view what) const {
    system_.CheckBuffer(region.buffer, role, std::string(what));
    const Memory& m = system_.memory(region.buffer);
    if (region.box.end() > m.Size(region.buffer.index)) {
      throw Error(ErrorKind::kOutOfBounds, std::string(what) + " ends at byte " +
                                               std::to_string(region.box.end()) + " of '" +
                                               m.Label(region.buffer.index) + "', which has only " +
                                               std::to_string(m.Size(region.buffer.index)) +
                                               " bytes; slice the ref within its shape.");
    }
  }

  BufferHandle Allocate(MemorySpace space, uint64_t bytes, const std::string& label,
                        Uninitialized fill) override {
    CatchUp();
    return BufferHandle{chip_, space, system_.memory(chip_, space).Allocate(bytes, label, fill)};
  }
  void Free(BufferHandle buffer) override {
    CatchUp();
    system_.FreeBuffer(chip_, buffer);
  }
  SemaphoreHandle AddSemaphore(SemaphoreKind kind, const std::string& name) override {
    CatchUp();
    return system_.NewSemaphore(chip_, kind, name);
  }

  ActivityId Spawn(const std::string& name, std::function<void(CorePort&)> body) override {
    Impl& s = system_;
    auto& tracks = s.activity_tracks_[chip_];
    auto free = std::find_if(tracks.begin(), tracks.end(), [](const auto& t) { return !t.second; });
    if (free == tracks.end()) {
      const int n = static_cast<int>(tracks.size());
      tracks.emplace_back(s.trace_->AddTrack(s.tracks_[chip_].chip, "async " + std::to_string(n),
                                             kActivityTrackRank + n),
                          false);
      free = tracks.end() - 1;
    }
    free->second = true;
    const auto id = static_cast<ActivityId>(s.activities_.size());
    Core* child =
        s.activities_
            .emplace_back(std::make_unique<Core>(s, chip_, free->first, root_ ? root_ : this, name))
            .get();
    child->track_slot_ = static_cast<size_t>(free - tracks.begin());
    s.waiters_[chip_].push_back(child);
    ++unjoined_;
    sc_core::sc_spawn_options options;
    options.set_stack_size(kThreadStackBytes);
    sc_core::sc_spawn([child, body = std::move(body)] { child->Body(body); },
                      ("activity_" + std::to_string(id)).c_str(), &options);
    return id;
  }

  void YieldToSameTime() override {
    sc_core::wait(sc_core::SC_ZERO_TIME);
    stack_.Announce();
  }

  void Join(ActivityId id) override {
    if (id >= system_.activities_.size() || system_.activities_[id]->chip_ != chip_ ||
        system_.activities_[id]->joined_) {
      throw Error(ErrorKind::kKernelMisuse, system_.torus_.Describe(chip_) + " joins activity " +
                                                std::to_string(id) +
                                                ", which it did not spawn or joined already.");
    }
    Core& child = *system_.activities_[id];
    child.joined_ = true;
    --unjoined_;
    if (child.finished_) return;
    const Picoseconds since = Now();
    system_.trace_->Begin(track_, since, "join " + child.name_);
    joining_ = &child;
    while (!child.finished_) {
      sc_core::wait(child.done_);
      stack_.Announce();
    }
    joining_ = nullptr;
    stats_.blocked += Now() - since;
    system_.trace_->End(track_, Now());
  }

  // Runs the program (or a spawned activity's body); failures are recorded and stop the
  // simulation.
  void Body(const CoreProgram& program) {
    stack_ = ThreadStack(kThreadStackBytes);
    started_ = true;
    system_.trace_->Begin(track_, Now(), root_ ? name_ : std::string("kernel"));
    try {
      program(*this);
      if (unjoined_ > 0) {
        throw Error(ErrorKind::kKernelMisuse,
                    system_.torus_.Describe(chip_) + " ends '" + (root_ ? name_ : "the kernel") +
                        "' with " + std::to_string(unjoined_) +
                        " spawned activities never joined; join every activity you start.");
      }
    } catch (const Error& e) {
      system_.Fail(e.kind(), e.what());
      return;
    } catch (const sc_core::sc_unwind_exception&) {
      throw;  // SystemC is ending this suspended thread (SystemCContext::EndSuspendedThreads)
    } catch (const std::exception& e) {
      system_.Fail(ErrorKind::kKernelMisuse,
                   system_.torus_.Describe(chip_) + ": the kernel threw an exception: " + e.what());
      return;
    }
    CatchUp();
    while (open_scopes_ > 0)
      EndScope();
    system_.trace_->End(track_, Now());
    finished_ = true;
    stats_.finish = Now();
    if (root_) {  // the chip's units did this work; the track and the wake-up list move on
      root_->stats_.mxu_busy += stats_.mxu_busy;
      root_->stats_.vpu_busy += stats_.vpu_busy;
      system_.activity_tracks_[chip_][track_slot_].second = false;
      auto& waiters = system_.waiters_[chip_];
      waiters.erase(std::find(waiters.begin(), waiters.end(), this));
      done_.notify(sc_core::SC_ZERO_TIME);
    }
  }

  // After a failure: ends the slices this core still has open, so the trace stays valid
  // up to the failure and shows where the core stood.
  void CloseTrace(Picoseconds now, const std::string& why) {
    if (!started_) return;
    const traces::TrackId track = track_;
    if (computing_on_) system_.trace_->End(computing_on_, now);  // stopped mid-op
    if (waiting_ || joining_ || polling_) system_.trace_->End(track, now);
    while (open_scopes_ > 0)
      EndScope();
    system_.trace_->Instant(track, now, why);
    system_.trace_->End(track, now);  // the kernel slice
  }

  // Wakes the core if it waits on `s` and `s` now holds enough.
  void Poke(const Semaphore& s) {
    if (waiting_ == &s && s.value >= wait_amount_) wake_.notify(sc_core::SC_ZERO_TIME);
  }

  bool finished() const { return finished_; }
  bool started() const { return started_; }
  const Core* joining() const { return joining_; }
  const std::string& name() const { return name_; }
  const Semaphore* waiting() const { return waiting_; }
  const Semaphore* polling() const { return polling_; }
  uint64_t poll_reads() const { return poll_reads_; }
  int64_t wait_amount() const { return wait_amount_; }
  WaitKind wait_kind() const { return wait_kind_; }
  const std::string& wait_what() const { return wait_what_; }
  const CoreStats& stats() const { return stats_; }

 private:
  static constexpr int kActivityTrackRank = 900;  // after the chip's fixed tracks

  Impl& system_;
  ChipId chip_;
  traces::TrackId track_;
  Core* root_;        // the core that spawned this activity; nullptr for the core itself
  std::string name_;  // an activity's name
  size_t track_slot_ = 0;
  int unjoined_ = 0;
  bool joined_ = false;
  const Core* joining_ = nullptr;
  traces::TrackId computing_on_ = 0;  // the MXU/VPU track of a compute in progress
  sc_core::sc_event done_;
  // Waits out the reads the core ran ahead by, before it does anything the model sees.
  void CatchUp() {
    if (ahead_ == 0) return;
    const Picoseconds polled = ahead_;
    ahead_ = 0;
    sc_core::wait(sc_core::sc_time::from_value(polled));
    stack_.Announce();
    stats_.blocked += polled;  // polling is waiting for a semaphore, as a blocking wait is
    system_.trace_->End(track_, Now());
    polling_ = nullptr;
  }

  static constexpr Picoseconds kNever = ~Picoseconds{0};
  ThreadStack stack_;
  sc_core::sc_event wake_;
  Picoseconds read_cost_ = 0;
  Picoseconds ahead_ = 0;    // reads done but not yet waited out
  Picoseconds horizon_ = 0;  // no event anywhere before this time (while ahead_ > 0)
  const Semaphore* polling_ = nullptr;
  uint64_t poll_reads_ = 0;
  bool nothing_pending_ = false;  // no event anywhere in the model since polling began
  const Semaphore* waiting_ = nullptr;
  int64_t wait_amount_ = 0;
  WaitKind wait_kind_ = WaitKind::kSemaphore;
  std::string wait_what_;
  int open_scopes_ = 0;
  bool started_ = false;
  bool finished_ = false;
  CoreStats stats_;
};

System::Impl::Impl(const config::Topology& topology, SystemOptions options)
    : topology_(topology),
      options_(std::move(options)),
      torus_(DeviceGrid(
                 std::vector<int>(topology.mesh().shape().begin(), topology.mesh().shape().end()),
                 std::vector<std::string>(topology.mesh().axis_names().begin(),
                                          topology.mesh().axis_names().end())),
             std::vector<bool>(topology.mesh().wraparound().begin(),
                               topology.mesh().wraparound().end())),
      trace_(options_.trace ? options_.trace : &null_trace_) {
  events_ = std::make_unique<EventQueue>();
  hop_latency_ = NanosecondsToTime(topology_.ici().hop_latency_ns());
  chunk_bytes_ = topology_.chip().dma().chunk_bytes();
  const auto& chip_config = topology_.chip();
  const uint32_t chips = torus_.chips();
  const uint32_t engines = chip_config.dma().engines();

  tracks_.resize(chips);
  semaphores_.resize(chips);
  dma_queue_.resize(chips);
  engine_busy_.assign(chips, std::vector<bool>(engines, false));
  bytes_in_flight_.assign(chips, 0);
  for (ChipId chip = 0; chip < chips; ++chip) {
    ChipTracks& t = tracks_[chip];
    t.chip = trace_->AddProcessTrack(torus_.Describe(chip), static_cast<int>(chip));
    int rank = 0;
    t.core = trace_->AddTrack(t.chip, "core", rank++);
    t.mxu = trace_->AddTrack(t.chip, "MXU", rank++);
    t.vpu = trace_->AddTrack(t.chip, "VPU", rank++);
    for (uint32_t e = 0; e < engines; ++e)
      t.dma_engines.push_back(trace_->AddTrack(t.chip, "DMA " + std::to_string(e), rank++));
    t.dma_arrivals = trace_->AddTrack(t.chip, "DMA arrivals", rank++);
    t.hbm = trace_->AddTrack(t.chip, "HBM port", rank++);
    t.vmem = trace_->AddTrack(t.chip, "VMEM port", rank++);
    t.smem = trace_->AddTrack(t.chip, "SMEM port", rank++);
    for (LinkId link : torus_.LinksFrom(chip)) {
      t.links.push_back(trace_->AddTrack(t.chip, "ICI " + torus_.link(link).name + " out", rank++));
    }
    t.bytes_in_flight =
        trace_->AddCounterTrack(t.chip, "DMA bytes in flight", traces::CounterUnit::kBytes, rank++);

    const std::string owner = torus_.Describe(chip);
    auto add_memory = [&](MemorySpace space, const config::MemoryConfig& m, traces::TrackId track) {
      memories_.push_back(std::make_unique<Memory>(
          owner, space, m.capacity_bytes(), options_.functional,
          std::make_unique<BandwidthPort>(owner + " " + MemorySpaceName(space),
                                          m.bandwidth_bytes_per_s(), trace_, track)));
    };
    add_memory(MemorySpace::kHbm, chip_config.hbm(), t.hbm);
    add_memory(MemorySpace::kVmem, chip_config.vmem(), t.vmem);
    add_memory(MemorySpace::kSmem, chip_config.smem(), t.smem);
  }
  links_.resize(torus_.links().size());
  for (ChipId chip = 0; chip < chips; ++chip) {
    const auto out = torus_.LinksFrom(chip);
    for (size_t i = 0; i < out.size(); ++i) {
      links_[out[i]] = std::make_unique<BandwidthPort>(
          torus_.Describe(chip) + " ICI " + torus_.link(out[i]).name,
          topology_.ici().link_bandwidth_bytes_per_s(), trace_, tracks_[chip].links[i]);
    }
  }
  for (ChipId chip = 0; chip < chips; ++chip)
    cores_.push_back(std::make_unique<Core>(*this, chip, tracks_[chip].core));
  waiters_.resize(chips);
  for (ChipId chip = 0; chip < chips; ++chip)
    waiters_[chip].push_back(cores_[chip].get());
  activity_tracks_.resize(chips);
  unit_free_.assign(chips, {0, 0});
  // Timing-only runs move no data, so nothing they do can read stale bytes.
  if (options_.functional && options_.race_check) {
    races_ = std::make_unique<RaceDetector>(
        chips, [this](const RaceDetector::Race& race) { ReportRace(race); });
    race_tracks_.assign(chips, 0);
  }
}

void System::Impl::ReportRace(const RaceDetector::Race& race) {
  const ChipId chip = race.buffer.chip;
  const std::string message = RaceMessage(
      race, [&](ChipId c) { return torus_.Describe(c); },
      std::string(MemorySpaceName(race.buffer.space)) + " buffer '" +
          memory(race.buffer).Label(race.buffer.index) + "'");
  // Only the first failure is reported; a later race would write out of time order.
  if (!failed_ && trace_ != &null_trace_) {
    if (!race_tracks_[chip])
      race_tracks_[chip] = trace_->AddTrack(tracks_[chip].chip, "races", 900);
    for (const RaceDetector::Access* a : {&race.earlier, &race.later}) {
      trace_->Instant(race_tracks_[chip], a->when, "race: " + a->what,
                      {{"by", torus_.Describe(a->chip)}, {"in", a->where}});
    }
  }
  throw Error(ErrorKind::kRace, message);
}

System::Impl::~Impl() = default;

void System::Impl::CheckBuffer(const BufferHandle& b, const char* role, const std::string& what) {
  if (b.chip >= torus_.chips() || !memory(b).Live(b.index)) {
    throw Error(ErrorKind::kKernelMisuse,
                what + ": the buffer " + role + " does not exist (freed, or never allocated).");
  }
}

void System::Impl::CheckSemaphore(SemaphoreHandle h, const char* role, const std::string& what) {
  if (h.chip >= torus_.chips() || h.index >= semaphores_[h.chip].size()) {
    throw Error(ErrorKind::kSemaphoreMisuse,
                what + ": the semaphore " + role + " does not exist; allocate it as scratch.");
  }
}

SemaphoreHandle System::Impl::NewSemaphore(ChipId chip, SemaphoreKind kind,
                                           const std::string& name) {
  auto& list = semaphores_[chip];
  list.push_back(Semaphore{name, kind, 0, {}, 0});
  Semaphore& s = list.back();
  // Watching a semaphore's value over time is how a user sees who waits for whom; only
  // worth the tracks when a trace is written.
  if (options_.trace) {
    s.counter_track =
        trace_->AddCounterTrack(tracks_[chip].chip, std::string("sem ") + name,
                                traces::CounterUnit::kCount, 1000 + static_cast<int>(list.size()));
    trace_->Counter(s.counter_track, EventQueue::Now(), 0);
  }
  return SemaphoreHandle{chip, static_cast<uint32_t>(list.size() - 1)};
}

void System::Impl::Fail(ErrorKind kind, const std::string& message) {
  if (failed_) return;  // the first failure is the cause; later ones are consequences
  failed_ = true;
  error_kind_ = kind;
  error_ = message;
  sc_core::sc_pause();  // not sc_stop: ending the suspended threads needs one more delta
}

void System::Impl::AddToSemaphore(SemaphoreHandle h, int64_t amount, const Touch* touch) {
  Semaphore& s = semaphore(h);
  s.value += amount;
  if (touch) {
    s.recent.push_back(*touch);
    if (s.recent.size() > kRecentTouches) s.recent.erase(s.recent.begin());
  }
  if (s.counter_track)
    trace_->Counter(s.counter_track, EventQueue::Now(), static_cast<double>(s.value));
  for (Core* core : waiters_[h.chip])
    core->Poke(s);
}

void System::Impl::Signal(ChipId issuer, SemaphoreHandle target, int64_t amount) {
  if (target.chip >= torus_.chips()) {
    throw Error(ErrorKind::kKernelMisuse,
                torus_.Describe(issuer) + " signals chip " + std::to_string(target.chip) +
                    ", which is outside the " + std::to_string(torus_.chips()) + "-chip slice.");
  }
  CheckSemaphore(target, "signalled", "signal");
  Semaphore& s = semaphore(target);
  if (s.kind == SemaphoreKind::kDma) {
    throw Error(ErrorKind::kSemaphoreMisuse,
                torus_.Describe(issuer) + " signals DMA semaphore '" + s.name +
                    "'. DMA semaphores count bytes moved by DMAs; signal a REGULAR semaphore.");
  }
  if (amount <= 0) {
    throw Error(ErrorKind::kSemaphoreMisuse, torus_.Describe(issuer) + " signals '" + s.name +
                                                 "' with " + std::to_string(amount) +
                                                 "; the increment must be positive.");
  }
  Touch touch{EventQueue::Now(), issuer, amount, "signal"};
  const size_t hops = torus_.Route(issuer, target.chip).size();
  if (races_) {
    auto clock = races_->Release(issuer);
    if (hops == 0) races_->SignalArrived(target, clock);
    if (hops > 0) {
      events_->At(EventQueue::Now() + hops * hop_latency_,
                  [this, target, amount, touch, clock = std::move(clock)] {
                    races_->SignalArrived(target, clock);
                    AddToSemaphore(target, amount, &touch);
                  });
      return;
    }
  }
  if (hops == 0) {
    AddToSemaphore(target, amount, &touch);
  } else {
    events_->At(EventQueue::Now() + hops * hop_latency_,
                [this, target, amount, touch] { AddToSemaphore(target, amount, &touch); });
  }
}

void System::Impl::StartDma(ChipId issuer, const DmaRequest& request) {
  // Every DMA passes here, so the description is only built when a check fails.
  const auto what = [&] { return "DMA '" + request.label + "' from " + torus_.Describe(issuer); };
  auto check_buffer = [&](const BufferHandle& b, const char* role) {
    if (b.chip >= torus_.chips() || !memory(b).Live(b.index)) CheckBuffer(b, role, what());
  };
  check_buffer(request.source.buffer, "read");
  if (request.destination.buffer.chip >= torus_.chips()) {
    throw Error(ErrorKind::kKernelMisuse,
                what() + " targets chip " + std::to_string(request.destination.buffer.chip) +
                    ", which is outside the " + std::to_string(torus_.chips()) + "-chip slice.");
  }
  check_buffer(request.destination.buffer, "written");
  if (request.source.buffer.chip != issuer) {
    throw Error(ErrorKind::kKernelMisuse,
                what() +
                    " reads from another chip's memory; a DMA reads local memory and may "
                    "write anywhere. Start it on the chip that holds the data.");
  }
  auto check_bounds = [&](const Region& r, const char* role) {
    const uint64_t size = memory(r.buffer).Size(r.buffer.index);
    if (r.box.end() > size) {
      throw Error(ErrorKind::kOutOfBounds,
                  what() + ": its " + role + " region ends at byte " + std::to_string(r.box.end()) +
                      " of '" + memory(r.buffer).Label(r.buffer.index) + "', which has only " +
                      std::to_string(size) + " bytes.");
    }
  };
  check_bounds(request.source, "source");
  check_bounds(request.destination, "destination");
  if (request.source.box.bytes() != request.destination.box.bytes()) {
    throw Error(ErrorKind::kKernelMisuse,
                what() + " copies " + std::to_string(request.source.box.bytes()) +
                    " bytes into a destination of " +
                    std::to_string(request.destination.box.bytes()) +
                    " bytes; source and destination must have the same size.");
  }
  auto check_dma_semaphore = [&](SemaphoreHandle h, ChipId expected_chip, const char* role) {
    if (h.chip >= torus_.chips() || h.index >= semaphores_[h.chip].size())
      CheckSemaphore(h, role, what());
    if (h.chip != expected_chip || semaphore(h).kind != SemaphoreKind::kDma) {
      throw Error(ErrorKind::kSemaphoreMisuse,
                  what() + ": its " + role + " semaphore '" + semaphore(h).name + "' is a " +
                      SemaphoreKindName(semaphore(h).kind) +
                      " semaphore; DMAs count bytes on SemaphoreType::DMA semaphores.");
    }
  };
  check_dma_semaphore(request.recv_semaphore, request.destination.buffer.chip, "receive");
  if (request.has_send_semaphore) check_dma_semaphore(request.send_semaphore, issuer, "send");

  const uint32_t race_id = races_ ? races_->StartDma(issuer, request, EventQueue::Now()) : 0;
  Transfer& t = transfers_.emplace_back();
  t.id = transfers_.size();
  t.race_id = race_id;
  t.issuer = issuer;
  t.request = request;
  t.bytes = request.source.box.bytes();
  const ChipId destination = request.destination.buffer.chip;
  const auto route = torus_.Route(issuer, destination);
  t.hop_count = static_cast<int>(route.size());
  t.latency = route.size() * hop_latency_;
  t.hops.push_back(Hop{&memory(request.source.buffer).port(), 1, false});
  for (LinkId link : route)
    t.hops.push_back(Hop{links_[link].get(), 1, true});
  BandwidthPort* destination_port = &memory(request.destination.buffer).port();
  if (destination_port == t.hops.front().port && route.empty()) {
    t.hops.front().multiplier = 2;
  } else {
    t.hops.push_back(Hop{destination_port, 1, false});
  }
  if (destination != issuer) t.flow = next_flow_++;
  ++stats_.dmas;
  stats_.dma_bytes += t.bytes;
  CheckWriteRace(t);
  dma_queue_[issuer].push_back(&t);
  Admit(issuer);
}

uint64_t System::Impl::BufferKey(const BufferHandle& b) {
  return (static_cast<uint64_t>(b.chip) * 3 + static_cast<uint64_t>(b.space)) << 32 | b.index;
}

void System::Impl::CheckWriteRace(Transfer& t) {
  if (t.bytes == 0) return;
  auto& writers = writers_[BufferKey(t.request.destination.buffer)];
  for (const Transfer* other : writers) {
    if (!BoxesOverlap(other->request.destination.box, t.request.destination.box)) continue;
    const auto& b = t.request.destination.buffer;
    throw Error(ErrorKind::kRace,
                "race: DMA '" + t.request.label + "' from " + torus_.Describe(t.issuer) +
                    " writes bytes of '" + memory(b).Label(b.index) + "' on " +
                    torus_.Describe(b.chip) + " that DMA '" + other->request.label + "' from " +
                    torus_.Describe(other->issuer) +
                    " is still writing. Wait for the first copy to land (its receive "
                    "semaphore) before starting the second, or give each in-flight copy its own "
                    "buffer (N-buffering with capacity semaphores).");
  }
  writers.push_back(&t);
}

void System::Impl::FreeBuffer(ChipId issuer, BufferHandle buffer) {
  const std::string what = torus_.Describe(issuer) + " frees a buffer";
  CheckBuffer(buffer, "freed", what);
  if (buffer.chip != issuer) {
    throw Error(ErrorKind::kKernelMisuse, what + " of " + torus_.Describe(buffer.chip) +
                                              "; a core frees only its own buffers.");
  }
  auto settled = [](const Transfer& t) { return t.sent == t.bytes && t.landed == t.bytes; };
  while (settled_transfers_ < transfers_.size() && settled(transfers_[settled_transfers_]))
    ++settled_transfers_;
  for (size_t i = settled_transfers_; i < transfers_.size(); ++i) {
    const Transfer& t = transfers_[i];
    const bool reading = t.sent < t.bytes && t.request.source.buffer == buffer;
    const bool writing = t.landed < t.bytes && t.request.destination.buffer == buffer;
    if (!reading && !writing) continue;
    throw Error(ErrorKind::kRace, what + " '" + memory(buffer).Label(buffer.index) +
                                      "' while DMA '" + t.request.label + "' still " +
                                      (writing ? "writes into" : "reads from") +
                                      " it. Wait for the DMA before the scope that allocated "
                                      "the buffer ends.");
  }
  if (races_) races_->Free(buffer);
  memory(buffer).Free(buffer.index);
}

void System::Impl::Admit(ChipId chip) {
  auto& busy = engine_busy_[chip];
  while (!dma_queue_[chip].empty()) {
    auto free = std::find(busy.begin(), busy.end(), false);
    if (free == busy.end()) return;
    Transfer* t = dma_queue_[chip].front();
    dma_queue_[chip].pop_front();
    *free = true;
    BeginTransfer(*t, static_cast<int>(free - busy.begin()));
  }
}

void System::Impl::BeginTransfer(Transfer& t, int engine) {
  t.engine = engine;
  const ChipId destination = t.request.destination.buffer.chip;
  if (trace_ != &null_trace_) {  // the arguments cost more than the call: skip both untraced
    trace_->Begin(tracks_[t.issuer].dma_engines[engine], EventQueue::Now(), t.request.label,
                  {{"bytes", t.bytes},
                   {"to", torus_.Describe(destination)},
                   {"hops", static_cast<int64_t>(t.hop_count)}},
                  t.flow);
  }
  BytesInFlight(t.issuer, static_cast<int64_t>(t.bytes));
  if (t.bytes == 0) {
    Schedule(EventQueue::Now(), kDeparted, t);
    Schedule(EventQueue::Now() + t.latency, kLanded, t);
    return;
  }
  ReserveChunk(t);
}

void System::Impl::Schedule(Picoseconds when, ChunkEvent event, Transfer& t, uint64_t bytes) {
  events_->At(when, &Impl::RunChunkEvent, this, reinterpret_cast<uintptr_t>(&t),
              bytes << 2 | event);
}

void System::Impl::RunChunkEvent(void* impl, uint64_t transfer, uint64_t event_and_bytes) {
  auto& self = *static_cast<Impl*>(impl);
  auto& t = *reinterpret_cast<Transfer*>(static_cast<uintptr_t>(transfer));
  const uint64_t bytes = event_and_bytes >> 2;
  switch (static_cast<ChunkEvent>(event_and_bytes & 3)) {
    case kDeparted:
      self.OnDeparted(t, bytes);
      break;
    case kDepartedThenReserve:
      self.OnDeparted(t, bytes);
      self.ReserveChunk(t);
      break;
    case kReserve:
      self.ReserveChunk(t);
      break;
    case kLanded:
      self.OnLanded(t, bytes);
      break;
  }
}

void System::Impl::ReserveChunk(Transfer& t) {
  const Picoseconds now = EventQueue::Now();
  const uint64_t bytes = std::min(chunk_bytes_, t.bytes - t.sent);
  // Data streams through the hops of a chunk (cut-through). A hop may start once the
  // chunk's head reaches it (a link adds its latency). Memory is much faster than a link,
  // and in hardware its reads interleave finely with other traffic, so a link fed from
  // memory is only held back until it could no longer finish after the read. Each hop
  // takes its earliest free gap after that. The source paces itself to the slowest hop,
  // as credit flow control would, so one DMA cannot queue up a link's whole future.
  Picoseconds previous_start = now;
  Picoseconds previous_end = now;
  bool previous_link = false;
  Picoseconds head_latency = 0;
  Picoseconds pace = now;
  Picoseconds first_link_end = 0;
  Picoseconds arrival = now;
  for (size_t i = 0; i < t.hops.size(); ++i) {
    const Hop& hop = t.hops[i];
    const uint64_t held = bytes * hop.multiplier;
    const Picoseconds duration = hop.port->Duration(held);
    Picoseconds earliest = now;
    if (i > 0) {
      const Picoseconds gap = previous_link ? hop_latency_ : 0;
      if (previous_link) head_latency += hop_latency_;
      if (!previous_link && hop.link) {
        earliest = std::max(earliest, previous_end > duration ? previous_end - duration : 0);
      } else {
        earliest = std::max(earliest, previous_start + gap);
      }
    }
    const Picoseconds start = hop.port->Reserve(now, earliest, held, t.id, &t.request.label);
    const Picoseconds end = start + duration;
    pace = std::max(pace, end - std::min(end, head_latency));
    if (hop.link && first_link_end == 0) first_link_end = end;
    arrival = std::max(arrival, end + (hop.link ? hop_latency_ : 0));
    previous_start = start;
    previous_end = end;
    previous_link = hop.link;
  }
  const Picoseconds departure = first_link_end ? first_link_end : arrival;
  pace = std::max(pace, departure);
  const bool more = t.sent + bytes < t.bytes;
  Schedule(departure, more && pace == departure ? kDepartedThenReserve : kDeparted, t, bytes);
  if (more && pace != departure) Schedule(pace, kReserve, t);
  t.reserved += bytes;
  Schedule(arrival, kLanded, t, bytes);
}

void System::Impl::OnDeparted(Transfer& t, uint64_t bytes) {
  t.sent += bytes;
  if (t.request.has_send_semaphore) {
    if (t.sent == t.bytes) {  // only the last chunk is remembered, so only it builds a Touch
      const Touch touch{EventQueue::Now(), t.issuer, static_cast<int64_t>(t.bytes),
                        "DMA '" + t.request.label + "' (sent)"};
      AddToSemaphore(t.request.send_semaphore, static_cast<int64_t>(bytes), &touch);
    } else {
      AddToSemaphore(t.request.send_semaphore, static_cast<int64_t>(bytes), nullptr);
    }
  }
  if (t.sent < t.bytes) return;
  if (races_)
    races_->DmaSent(t.race_id, t.request.has_send_semaphore ? &t.request.send_semaphore : nullptr);
  // The payload leaves with its last chunk; the sender may reuse the source after wait_send.
  if (options_.functional) {
    t.staging.resize(t.bytes);
    memory(t.request.source.buffer)
        .Gather(t.request.source.buffer.index, t.request.source.box, t.staging.data());
  }
  trace_->End(tracks_[t.issuer].dma_engines[t.engine], EventQueue::Now());
  engine_busy_[t.issuer][t.engine] = false;
  Admit(t.issuer);
}

void System::Impl::OnLanded(Transfer& t, uint64_t bytes) {
  t.landed += bytes;
  BytesInFlight(t.issuer, -static_cast<int64_t>(bytes));
  const bool last = t.landed == t.bytes;
  if (last && t.bytes > 0) {
    auto& writers = writers_[BufferKey(t.request.destination.buffer)];
    writers.erase(std::find(writers.begin(), writers.end(), &t));
  }
  if (last) {
    if (options_.functional) {
      memory(t.request.destination.buffer)
          .Scatter(t.request.destination.buffer.index, t.request.destination.box, t.staging.data());
      std::vector<uint8_t>().swap(t.staging);
    }
    const ChipId destination = t.request.destination.buffer.chip;
    if (trace_ != &null_trace_) {
      trace_->Instant(tracks_[destination].dma_arrivals, EventQueue::Now(),
                      "arrived: " + t.request.label,
                      {{"bytes", t.bytes}, {"from", torus_.Describe(t.issuer)}}, 0, t.flow);
    }
  }
  if (last && races_) races_->DmaLanded(t.race_id, t.request.recv_semaphore);
  if (last) {  // only the last chunk is remembered, so only it builds a Touch
    const Touch touch{EventQueue::Now(), t.issuer, static_cast<int64_t>(t.bytes),
                      "DMA '" + t.request.label + "'"};
    AddToSemaphore(t.request.recv_semaphore, static_cast<int64_t>(bytes), &touch);
  } else if (bytes > 0) {
    AddToSemaphore(t.request.recv_semaphore, static_cast<int64_t>(bytes), nullptr);
  }
}

void System::Impl::BytesInFlight(ChipId chip, int64_t delta) {
  bytes_in_flight_[chip] += delta;
  trace_->Counter(tracks_[chip].bytes_in_flight, EventQueue::Now(),
                  static_cast<double>(bytes_in_flight_[chip]));
}

std::string System::Impl::RecentTouches(const Semaphore& s) const {
  if (s.recent.empty() && s.value != 0) {
    // Only a DMA's last chunk is remembered, so a value with no history came from chunks
    // of DMAs still landing.
    return "it holds " + std::to_string(s.value) +
           " from the first chunks of DMAs still landing into it; no DMA into it has finished "
           "and nothing has signalled it yet";
  }
  if (s.recent.empty()) return "nothing has signalled it or sent data to it yet";
  std::string text = "last changed by";
  for (auto it = s.recent.rbegin(); it != s.recent.rend(); ++it) {
    text += (it == s.recent.rbegin() ? " " : "; ") + it->what + " from " +
            torus_.Describe(it->from) + " (+" + std::to_string(it->amount) + " at " +
            FormatTime(it->when) + ")";
  }
  return text;
}

std::string System::Impl::DescribeWaiters() const {
  std::ostringstream text;
  std::vector<ChipId> finished;
  auto describe = [&](const Core& core) {
    const std::string who = torus_.Describe(core.chip()) +
                            (core.name().empty() ? "" : " (async '" + core.name() + "')");
    if (core.joining()) {
      text << "\n  " << who << " waits to join async '" << core.joining()->name() << "'.";
      return;
    }
    const Semaphore* s = core.waiting();
    if (const Semaphore* polled = core.polling(); polled && !s) {
      text << "\n  " << who << " polls " << SemaphoreKindName(polled->kind) << " semaphore '"
           << polled->name << "' with semaphore_read (" << core.poll_reads()
           << " reads since it last did anything else): value " << polled->value << "; "
           << RecentTouches(*polled) << ".";
      return;
    }
    if (!s) return;
    text << "\n  " << who << " waits in " << core.wait_what() << " on "
         << SemaphoreKindName(s->kind) << " semaphore '" << s->name << "': value " << s->value
         << ", needs " << core.wait_amount() << "; " << RecentTouches(*s) << ".";
  };
  for (const auto& core : cores_) {
    if (core->finished()) {
      finished.push_back(core->chip());
      continue;
    }
    describe(*core);
  }
  for (const auto& activity : activities_) {
    if (!activity->finished()) describe(*activity);
  }
  if (!finished.empty()) {
    text << "\n  Finished their kernels, so they will send nothing more:";
    for (size_t i = 0; i < finished.size() && i < 16; ++i)
      text << (i ? ", " : " ") << torus_.Describe(finished[i]);
    if (finished.size() > 16) text << " and " << finished.size() - 16 << " more";
    text << ".";
  }
  return text.str();
}

std::string System::Impl::DeadlockReport() const {
  size_t blocked = 0;
  for (const auto& core : cores_)
    blocked += !core->finished();
  std::ostringstream text;
  text << "deadlock at " << FormatTime(EventQueue::Now()) << ": " << blocked << " of "
       << cores_.size()
       << " chips are blocked and no DMA or signal in flight can wake them. Wait-for graph:"
       << DescribeWaiters()
       << "\n  Check that every wait has a matching DMA or signal, and that each DMA's "
          "receive semaphore and byte count match the descriptor the receiver waits with.";
  return text.str();
}

std::string System::Impl::SpinReport(Picoseconds now) const {
  return "livelock at " + FormatTime(now) +
         ": a core spins with semaphore_read on a semaphore that nothing left in the model "
         "can change (every other core has finished or is blocked, and no DMA or signal is "
         "in flight):" +
         DescribeWaiters() +
         "\n  Signal the semaphore from the core or DMA meant to, or wait on it with "
         "semaphore_wait so a missing signal shows as a deadlock.";
}

void System::Impl::CheckSemaphoresAtExit() {
  std::ostringstream text;
  int problems = 0;
  for (ChipId chip = 0; chip < torus_.chips(); ++chip) {
    for (const auto& s : semaphores_[chip]) {
      if (s.value == 0) continue;
      if (++problems > 16) continue;
      text << "\n  " << torus_.Describe(chip) << " ends its kernel with "
           << SemaphoreKindName(s.kind) << " semaphore '" << s.name << "' at " << s.value << "; "
           << RecentTouches(s) << ".";
    }
  }
  if (problems == 0) return;
  if (problems > 16) text << "\n  ... and " << problems - 16 << " more.";
  Fail(ErrorKind::kSemaphoreNotZero,
       std::to_string(problems) +
           " semaphore(s) are not zero at kernel exit, but every semaphore must be 0 when the "
           "kernel ends:" +
           text.str() +
           "\n  Wait for every DMA you start (wait_send on the sender, wait_recv on the "
           "receiver; DMA semaphores count bytes) and consume every signal.");
}

RunOutcome System::Impl::Run(const CoreProgram& program) {
  if (ran_) throw Error(ErrorKind::kInvalidArgument, "a System runs once; build a new one.");
  ran_ = true;
  sc_core::sc_spawn_options thread_options;
  thread_options.set_stack_size(kThreadStackBytes);
  for (auto& core : cores_) {
    Core* c = core.get();
    sc_core::sc_spawn([c, &program] { c->Body(program); },
                      ("core_" + std::to_string(c->chip())).c_str(), &thread_options);
  }
  sc_core::sc_start(sc_core::sc_time::from_value(options_.time_limit),
                    sc_core::SC_EXIT_ON_STARVATION);
  AnnounceMainStack();

  if (!failed_) {
    const bool all_finished =
        std::all_of(cores_.begin(), cores_.end(), [](const auto& c) { return c->finished(); });
    if (!all_finished && sc_core::sc_pending_activity()) {
      Fail(ErrorKind::kTimeLimit,
           "the kernel ran past the simulated-time limit of " + FormatTime(options_.time_limit) +
               " without finishing. Still running or waiting:" + DescribeWaiters() +
               "\n  Raise the limit with --time-limit if the work is really that long, or look "
               "for a loop that never ends.");
    } else if (!all_finished) {
      Fail(ErrorKind::kDeadlock, DeadlockReport());
    } else {
      CheckSemaphoresAtExit();
    }
  }

  if (failed_) {
    const Picoseconds now = EventQueue::Now();
    const std::string why = std::string("FAILED: ") + ErrorKindName(error_kind_);
    for (auto& core : cores_) {
      if (!core->finished()) core->CloseTrace(now, why);
    }
    for (auto& activity : activities_) {
      if (!activity->finished()) activity->CloseTrace(now, why);
    }
    for (auto& t : transfers_) {
      if (t.engine >= 0 && t.sent < t.bytes)
        trace_->End(tracks_[t.issuer].dma_engines[t.engine], now);
      if (t.engine >= 0 && t.flow && t.landed < t.bytes) {
        trace_->Instant(tracks_[t.request.destination.buffer.chip].dma_arrivals, now,
                        "never arrived: " + t.request.label, {}, 0, t.flow);
      }
    }
  }
  for (auto& link : links_)
    link->FlushTrace();
  for (auto& m : memories_)
    m->port().FlushTrace();

  RunOutcome outcome;
  outcome.ok = !failed_;
  if (failed_) {
    outcome.error_kind = error_kind_;
    outcome.error = error_;
  }
  stats_.events = events_->callbacks_run();
  for (const auto& core : cores_) {
    stats_.cores.push_back(core->stats());
    stats_.end_time = std::max(stats_.end_time, core->stats().finish);
  }
  for (LinkId id = 0; id < links_.size(); ++id) {
    stats_.links.push_back(PortStats{links_[id]->name(), torus_.link(id).from,
                                     links_[id]->busy_time(), links_[id]->bytes_moved()});
  }
  for (size_t i = 0; i < memories_.size(); ++i) {
    auto& port = memories_[i]->port();
    stats_.memories.push_back(
        PortStats{port.name(), static_cast<ChipId>(i / 3), port.busy_time(), port.bytes_moved()});
  }
  outcome.stats = stats_;
  systemc_.EndSuspendedThreads();
  return outcome;
}

// ---------------------------------------------------------------------------------------

System::System(const config::Topology& topology, SystemOptions options)
    : impl_(std::make_unique<Impl>(topology, std::move(options))) {}
System::~System() = default;

const Torus& System::torus() const {
  return impl_->torus_;
}
const DeviceGrid& System::grid() const {
  return impl_->torus_.grid();
}
const config::Topology& System::topology() const {
  return impl_->topology_;
}
bool System::functional() const {
  return impl_->options_.functional;
}

BufferHandle System::Allocate(ChipId chip, MemorySpace space, uint64_t bytes,
                              const std::string& label, Uninitialized fill) {
  const uint32_t index = impl_->memory(chip, space).Allocate(bytes, label, fill);
  return BufferHandle{chip, space, index};
}

uint64_t System::BufferSize(BufferHandle buffer) const {
  return impl_->memory(buffer).Size(buffer.index);
}

void System::WriteHost(BufferHandle buffer, const void* data, uint64_t size) {
  impl_->memory(buffer).WriteAll(buffer.index, data, size);
}

std::vector<uint8_t> System::ReadHost(BufferHandle buffer) const {
  return impl_->memory(buffer).ReadAll(buffer.index);
}

SemaphoreHandle System::AddSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name) {
  return impl_->NewSemaphore(chip, kind, name);
}

RunOutcome System::Run(const CoreProgram& program) {
  return impl_->Run(program);
}

}  // namespace tpusim::sim

namespace tpusim::base {

std::unique_ptr<Engine> BuildEngine(const config::Topology& topology, EngineOptions options) {
  return std::make_unique<sim::System>(topology, std::move(options));
}

}  // namespace tpusim::base
