// Spawning activities needs SystemC's dynamic processes, declared only with this macro
// defined before <systemc> is first included.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sim/core_thread.h"

#include <algorithm>

#include "base/text.h"
#include "sim/chip.h"
#include "sim/compute_models.h"
#include "sim/dma_engine.h"
#include "sim/memory.h"
#include "sim/reports.h"
#include "sim/slice_state.h"
#include "sim/slowdown.h"
#include "sim/tensor_core.h"

namespace tpusim::sim {

namespace {

// What semaphore_read costs the core: a scalar load of the semaphore's sync flag. No public
// figure; modelled as a few cycles of the chip clock, like a scalar-memory load.
constexpr uint64_t kSemaphoreReadCycles = 4;
// Once nothing is pending anywhere (every other core finished or blocked, no DMA or signal
// in flight), no semaphore can change while a core only reads. A core that goes on reading
// this many times is spinning forever: report it at once instead of at the time limit.
// (A loop that gives up after fewer reads runs on as before.)
constexpr uint64_t kProvenSpinReads = uint64_t{1} << 20;
constexpr Picoseconds kNever = ~Picoseconds{0};
// The longest one compute op may take: 2^62 ps (53 days) leaves room to add it to the
// time now, and the double-to-integer conversions are defined below 2^63.
constexpr double kMaxOpPicoseconds = 4611686018427387904.0;

bool OnePassF32(base::MxuInput input, base::Precision precision) {
  return input == base::MxuInput::kF32 && precision == base::Precision::kDefault;
}

uint64_t F32DotsAtOnePass(const Work& work) {
  if (const auto* dot = std::get_if<base::KernelDot>(&work))
    return OnePassF32(dot->input, dot->precision) ? 1 : 0;
  uint64_t dots = 0;
  if (const auto* op = std::get_if<base::XlaOp>(&work)) {
    for (const base::XlaDot& d : op->dots)
      dots += OnePassF32(d.input, d.precision) ? 1 : 0;
  }
  return dots;
}

}  // namespace

CoreThread::CoreThread(SliceState& slice, TensorCore& core, traces::TrackId track, CoreThread* root,
                       std::string name)
    : slice_(slice),
      core_(core),
      chip_(core.chip().id()),
      core_index_(core.index()),
      track_(track),
      root_(root),
      name_(std::move(name)),
      read_cost_(CyclesToTime(kSemaphoreReadCycles, core.clock_hz())) {
  MakeEvents();  // an activity's, spawned while the simulation runs; a core's wait for Body
}

ChipId CoreThread::chip() const {
  return chip_;
}
bool CoreThread::functional() const {
  return slice_.run().functional();
}
Picoseconds CoreThread::Now() const {
  return EventQueue::Now() + ahead_;
}
double CoreThread::clock_hz() const {
  return core_.clock_hz();
}

void CoreThread::StartDma(const DmaRequest& request) {
  CatchUp();
  dma_->Start(request, core_index_);
}

void CoreThread::Wait(SemaphoreHandle handle, int64_t amount, WaitKind kind,
                      std::string_view what) {
  CatchUp();
  const Torus& torus = slice_.torus();
  // One look at its own chip's table, whose first line has the semaphore's address; a handle
  // it does not hold takes the checks, in their order.
  SemaphoreTable& own = slice_.semaphores(chip_);
  if (handle.chip != chip_ || handle.index >= own.size()) [[unlikely]] {
    slice_.CheckSemaphore(handle, "waited on", what);
    throw Error(ErrorKind::kSemaphoreMisuse,
                torus.Describe(chip_) + " waits on semaphore '" + slice_.semaphore(handle).name() +
                    "' of " + torus.Describe(handle.chip) +
                    ", but a core can only wait on its own semaphores; wait on the local one "
                    "and let the other chip signal it.");
  }
  Semaphore& s = own[handle.index];
  const bool dma_wait = kind != WaitKind::kSemaphore;
  if (dma_wait != (s.kind() == SemaphoreKind::kDma)) {
    throw Error(ErrorKind::kSemaphoreMisuse,
                torus.Describe(chip_) + " calls " + WaitKindName(kind) + " on " +
                    SemaphoreKindName(s.kind()) + " semaphore '" + s.name() + "'. " +
                    (dma_wait ? "DMA descriptors need DMA semaphores; allocate it as "
                                "SemaphoreType::DMA."
                              : "A DMA semaphore counts bytes and is waited on through its "
                                "copy descriptor's wait/wait_send/wait_recv."));
  }
  if (amount <= 0) {
    throw Error(ErrorKind::kSemaphoreMisuse, torus.Describe(chip_) + " waits for " +
                                                 std::to_string(amount) + " on semaphore '" +
                                                 s.name() + "'; the amount must be positive.");
  }
  if (s.value() < amount) {
    const Picoseconds since = Now();
    if (slice_.run().traced()) {  // the name and arguments cost allocations
      slice_.run().trace().Begin(track_, since, std::string(WaitKindName(kind)) + " " + s.name(),
                                 {{"needs", amount}, {"has", s.value()}});
    }
    waiting_ = &s;
    wait_amount_ = amount;
    RecordResumePoint();
    s.AwaitAtLeast(amount, this);
    wait_kind_ = kind;
    wait_what_ = what;
    while (s.value() < amount) {
      sc_core::wait(events_->wake);
      PrefetchNextResumed();
      stack_.Announce();
    }
    // A wait unwound instead (the run is over) leaves the semaphore naming this thread, which
    // is still there: poked, it finds it waits no more.
    s.StopWaiting(this);
    waiting_ = nullptr;
    stats_.blocked += Now() - since;
    slice_.run().trace().End(track_, Now());
  }
  if (AccessObserver* observer = slice_.observer())
    observer->Acquired(chip_, core_.index(), handle);
  s.Take(amount);
  if (s.counter_track())
    slice_.run().trace().Counter(s.counter_track(), Now(), static_cast<double>(s.value()));
}

void CoreThread::Signal(SemaphoreHandle handle, int64_t amount) {
  CatchUp();
  slice_.Signal(chip_, handle, amount, core_.index());
}

// Each read costs kSemaphoreReadCycles. Reads before the next event anywhere in the model
// cannot see a change, so the core runs ahead of SystemC time by their cost and waits once,
// when something could happen or the time limit comes (temporal decoupling,
// docs/references.md §8): a polling loop costs simulated time, not a thread switch per read.
int64_t CoreThread::Read(SemaphoreHandle handle) {
  slice_.CheckSemaphore(handle, "read", "semaphore_read");
  const Semaphore& s = slice_.semaphore(handle);
  if (ahead_ > 0 && EventQueue::Now() + ahead_ >= horizon_) WaitOutReads();
  if (ahead_ == 0) {
    const Picoseconds now = EventQueue::Now();
    const Picoseconds quiet = sc_core::sc_time_to_pending_activity().value();
    horizon_ =
        std::min(slice_.run().options().time_limit, quiet > kNever - now ? kNever : now + quiet);
    if (slice_.run().traced())  // the name costs an allocation
      slice_.run().trace().Begin(track_, now, "semaphore_read " + s.name());
  }
  polling_ = &s;  // the reports name the semaphore read last
  ++poll_reads_;
  if (poll_reads_ > kProvenSpinReads && SpinCannotEnd())
    throw Error(ErrorKind::kDeadlock, SpinReport(slice_, Now()));
  ahead_ += read_cost_;
  // A core that polls until a value arrives has seen what was signalled before it.
  if (AccessObserver* observer = slice_.observer(); observer && handle.chip == chip_)
    observer->Acquired(chip_, core_.index(), handle);
  return s.value();
}

// Nothing left in the model can change a semaphore: no DMA or signal is on the calendar, and
// every other thread of control has finished, waits for what it cannot get, or has itself
// only polled for kProvenSpinReads reads. (A loop that gives up after fewer reads goes on.)
bool CoreThread::SpinCannotEnd() const {
  if (!slice_.calendar().empty()) return false;
  auto passive = [this](const CoreThread& t) {
    if (&t == this || t.finished_) return true;
    if (t.waiting_) return t.waiting_->value() < t.wait_amount_;
    if (t.joining_) return !t.joining_->finished_;
    return t.polling_ && t.poll_reads_ > kProvenSpinReads;
  };
  for (const CoreThread* core : slice_.cores()) {
    if (!passive(*core)) return false;
  }
  for (const auto& activity : slice_.activities()) {
    if (!passive(*activity)) return false;
  }
  return true;
}

int64_t CoreThread::Peek(SemaphoreHandle handle) const {
  slice_.CheckSemaphore(handle, "read", "semaphore_read");
  return slice_.semaphore(handle).value();
}

std::string CoreThread::SemaphoreName(SemaphoreHandle handle) const {
  return slice_.semaphore(handle).name();
}

SemaphoreKind CoreThread::KindOf(SemaphoreHandle handle) const {
  return slice_.semaphore(handle).kind();
}

void CoreThread::Execute(const Work& work, std::string_view what) {
  CatchUp();
  stats_.f32_dots_at_one_pass += F32DotsAtOnePass(work);
  const ComputePlan plan = core_.compute_model().Plan(work, what);
  if (plan.launch > 0) Occupy(ComputeUnit::kScalar, Slowed(plan.launch, what), "launch", 0);
  if (plan.hbm_bytes > 0) StartStream(plan.hbm_bytes, plan.hbm_bytes_per_second, what);
  if (plan.cycles > 0) Occupy(plan.unit, SlowedCycles(plan.cycles, what), what, plan.cycles);
  if (stream_) AwaitStream();
  if (plan.exposed > 0) Occupy(ComputeUnit::kScalar, plan.exposed, "pipeline fill and drain", 0);
}

void CoreThread::Compute(ComputeUnit unit, uint64_t cycles, std::string_view what) {
  CatchUp();
  Occupy(unit, SlowedCycles(cycles, what), what, cycles);
}

double CoreThread::Slowdown() const {
  return ChipSlowdown(slice_.run().options(), chip_);
}

Picoseconds CoreThread::Slowed(Picoseconds duration, std::string_view what) const {
  if (chip_ >= slice_.run().options().chip_slowdown.size()) return duration;
  const double slowed = static_cast<double>(duration) * Slowdown();
  if (!(slowed < kMaxOpPicoseconds))
    TooLong(slowed, what, base::NumberText(static_cast<double>(duration) * 1e-12) + " s");
  return static_cast<Picoseconds>(slowed);
}

Picoseconds CoreThread::SlowedCycles(uint64_t cycles, std::string_view what) const {
  // Checked before the conversions, which are undefined past 2^63 picoseconds.
  const double picoseconds = static_cast<double>(cycles) * 1e12 / clock_hz() * Slowdown();
  if (!(picoseconds < kMaxOpPicoseconds)) {
    TooLong(picoseconds, what,
            std::to_string(cycles) + " cycles at " + base::NumberText(clock_hz()) + " Hz");
  }
  return Slowed(CyclesToTime(cycles, clock_hz()), what);
}

void CoreThread::TooLong(double picoseconds, std::string_view what,
                         const std::string& unslowed) const {
  throw Error(ErrorKind::kInvalidArgument,
              slice_.torus().Describe(chip_) + ": '" + std::string(what) + "' would take " +
                  base::NumberText(picoseconds * 1e-12) + " s of simulated time (" + unslowed +
                  ", times chip_slowdown " + base::NumberText(Slowdown()) +
                  "), more than simulated time can count (picoseconds in 64 bits). Lower the "
                  "chip's chip_slowdown, or split the op.");
}

void CoreThread::StartStream(uint64_t bytes, double bytes_per_second, std::string_view what) {
  Chip& chip = core_.chip();
  stream_ = std::make_unique<MemoryStream>(
      slice_.calendar(), chip.memory(MemorySpace::kHbm).port(), bytes, bytes_per_second,
      chip.config().dma().chunk_bytes(), slice_.run().NewStreamId(), &slice_.run().Label(what),
      [this] { events_->streamed.notify(sc_core::SC_ZERO_TIME); });
  stream_->Start();
}

void CoreThread::AwaitStream() {
  while (!stream_->finished()) {
    sc_core::wait(events_->streamed);
    stack_.Announce();
  }
  stream_.reset();
}

void CoreThread::Occupy(ComputeUnit unit, Picoseconds duration, std::string_view what,
                        uint64_t cycles) {
  if (duration == 0) return;
  // A unit another activity of this chip is using: wait for it, then take it. The scalar
  // unit (per-step overhead) is the core's own and drawn on its track.
  traces::TrackId track = track_;
  if (unit != ComputeUnit::kScalar) {
    Picoseconds& free_at = core_.unit_free(unit);
    if (free_at > Now()) {
      const Picoseconds start = free_at;
      free_at = start + duration;
      sc_core::wait(sc_core::sc_time::from_value(start - Now()));
      stack_.Announce();
    } else {
      free_at = Now() + duration;
    }
    const CoreTracks& tracks = core_.tracks();
    track = unit == ComputeUnit::kMxu ? tracks.mxu : tracks.vpu;
  }
  if (cycles > 0) {
    slice_.run().trace().Begin(track, Now(), what, {{"cycles", cycles}});
  } else {
    slice_.run().trace().Begin(track, Now(), what);
  }
  computing_on_ = track;
  sc_core::wait(sc_core::sc_time::from_value(duration));
  computing_on_ = 0;
  stack_.Announce();
  slice_.run().trace().End(track, Now());
  if (unit == ComputeUnit::kMxu) stats_.mxu_busy += duration;
  if (unit == ComputeUnit::kVpu) stats_.vpu_busy += duration;
}

void CoreThread::BeginScope(std::string_view name, const ScopeDetails& details) {
  CatchUp();
  if (details.empty()) {
    slice_.run().trace().Begin(track_, Now(), name);
  } else {
    traces::Args args;
    for (const auto& [key, text] : details)
      args.push_back({key, text});
    slice_.run().trace().Begin(track_, Now(), name, args);
  }
  if (AccessObserver* observer = slice_.observer())
    observer->BeginScope(chip_, core_.index(), name);
  ++open_scopes_;
}

void CoreThread::EndScope() {
  // Not CatchUp: a NamedScope's destructor ends its scope, and must not throw a host limit.
  poll_reads_ = 0;
  WaitOutReads();
  if (open_scopes_ == 0) return;
  --open_scopes_;
  if (AccessObserver* observer = slice_.observer()) observer->EndScope(chip_, core_.index());
  slice_.run().trace().End(track_, Now());
}

void CoreThread::Load(const Region& region, void* out, std::string_view what) {
  CatchUp();
  CheckAccess(region, "loaded from", what);
  if (AccessObserver* observer = slice_.observer())
    observer->CoreAccess(chip_, core_.index(), region, false, what, Now());
  slice_.memory(region.buffer).Gather(region.buffer.index, region.box, static_cast<uint8_t*>(out));
}

void CoreThread::Store(const Region& region, const void* in, std::string_view what) {
  CatchUp();
  CheckAccess(region, "stored to", what);
  if (AccessObserver* observer = slice_.observer())
    observer->CoreAccess(chip_, core_.index(), region, true, what, Now());
  slice_.memory(region.buffer)
      .Scatter(region.buffer.index, region.box, static_cast<const uint8_t*>(in));
}

void CoreThread::ReportRace(const RaceReport& race) {
  slice_.ReportRace(race);
}

void CoreThread::CheckAccess(const Region& region, const char* role, std::string_view what) const {
  slice_.CheckBuffer(region.buffer, role, std::string(what));
  const Memory& m = slice_.memory(region.buffer);
  if (region.box.end() > m.Size(region.buffer.index)) {
    throw Error(ErrorKind::kOutOfBounds, std::string(what) + " " + region.box.DescribeEnd() +
                                             " of '" + m.Label(region.buffer.index) +
                                             "', which has only " +
                                             std::to_string(m.Size(region.buffer.index)) +
                                             " bytes; slice the ref within its shape.");
  }
}

BufferHandle CoreThread::Allocate(MemorySpace space, uint64_t bytes, const std::string& label,
                                  Uninitialized fill) {
  CatchUp();
  const uint32_t core = space == MemorySpace::kHbm ? 0 : core_.index();
  return BufferHandle{chip_, space, core_.chip().memory(space, core).Allocate(bytes, label, fill),
                      core};
}

void CoreThread::Free(BufferHandle buffer) {
  CatchUp();
  const std::string what = slice_.torus().Describe(chip_) + " frees a buffer";
  slice_.CheckBuffer(buffer, "freed", what);
  if (buffer.chip != chip_) {
    throw Error(ErrorKind::kKernelMisuse, what + " of " + slice_.torus().Describe(buffer.chip) +
                                              "; a core frees only its own buffers.");
  }
  if (buffer.space != MemorySpace::kHbm && buffer.core != core_.index()) {
    throw Error(ErrorKind::kKernelMisuse, core_.chip().DescribeCore(core_.index()) + " frees a " +
                                              MemorySpaceName(buffer.space) + " buffer of core " +
                                              std::to_string(buffer.core) +
                                              "; a core frees only its own VMEM and SMEM buffers.");
  }
  Memory& memory = slice_.memory(buffer);
  core_.chip().dma().ledger().CheckFree(buffer, what, memory.Label(buffer.index));
  if (AccessObserver* observer = slice_.observer()) observer->Freed(buffer);
  memory.Free(buffer.index);
}

SemaphoreHandle CoreThread::AddSemaphore(SemaphoreKind kind, const std::string& name) {
  CatchUp();
  return core_.chip().AddSemaphore(kind, name);
}

void CoreThread::CatchUp() {
  if (slice_.run().watch().Expired()) [[unlikely]]
    throw Error(slice_.run().watch().kind(), HostLimitReport(slice_, Now()));
  poll_reads_ = 0;  // the core does something other than poll
  WaitOutReads();
}

void CoreThread::WaitOutReads() {
  if (ahead_ == 0) return;
  const Picoseconds polled = ahead_;
  ahead_ = 0;
  sc_core::wait(sc_core::sc_time::from_value(polled));
  stack_.Announce();
  stats_.blocked += polled;  // polling is waiting for a semaphore, as a blocking wait is
  slice_.run().trace().End(track_, Now());
  polling_ = nullptr;
}

}  // namespace tpusim::sim
