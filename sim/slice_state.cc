#include "sim/slice_state.h"

#include "sim/reports.h"

#include <cmath>
#include <systemc>

#include "base/text.h"
#include "sim/chip.h"
#include "sim/core_thread.h"
#include "sim/memory.h"
#include "sim/race_detector.h"
#include "sim/router.h"
#include "sim/slowdown.h"
#include "sim/tensor_core.h"
#include "sim/thread_budget.h"
#include "topologies/topology_loader.h"
#include "topologies/twist.h"

namespace tpusim::sim {

namespace {
// Where the twisted wraparound links land (empty for a plain torus).
std::vector<std::vector<int>> TwistOf(const config::Topology& topology) {
  const auto& mesh = topology.mesh();
  if (!mesh.twisted()) return {};
  return topologies::TwistShifts(std::vector<int>(mesh.shape().begin(), mesh.shape().end()));
}
}  // namespace

SliceState::SliceState(const config::Topology& topology, EngineOptions options)
    : topology_(topology),
      run_(std::move(options)),
      torus_(topologies::DeviceGridOf(topology_),
             std::vector<bool>(topology_.mesh().wraparound().begin(),
                               topology_.mesh().wraparound().end()),
             TwistOf(topology_), /*slices_over_dcn=*/topology_.has_multislice()),
      calendar_(std::make_unique<EventQueue>()),
      signal_latency_(NanosecondsToTime(topology_.ici().signal_latency_ns())),
      store_and_forward_(topology_.ici().forwarding() == config::IciConfig::STORE_AND_FORWARD) {
  calendar_->Watch(
      &run_.watch(), [](void* state) { static_cast<SliceState*>(state)->FailOnHostLimit(); }, this);
  CheckSlowdowns(run_.options(), torus_);
  // Made here, in one go, so that the chips' semaphores and waiters lie together
  // (sim/hot_arena.h).
  by_chip_ = hot_.MakeArray<ChipSemaphores>(torus_.chips(), hot_.resource());
  cores_.reserve(torus_.chips());
}

SliceState::~SliceState() = default;

void SliceState::ReportRace(const RaceReport& race) {
  const ChipId chip = race.buffer.chip;
  const std::string message = RaceMessage(
      race, [&](ChipId c, uint32_t core) { return chips_[c]->DescribeCore(core); },
      race.buffer.space == MemorySpace::kHbm ? torus_.Describe(chip)
                                             : chips_[chip]->DescribeCore(race.buffer.core),
      std::string(MemorySpaceName(race.buffer.space)) + " buffer '" +
          memory(race.buffer).Label(race.buffer.index) + "'");
  // Only the first failure is reported; a later race would write out of time order.
  if (!run_.failed() && run_.traced()) {
    // Made at the first race: the DSL reports some without the detector (timing-only runs).
    if (race_tracks_.empty()) race_tracks_.assign(torus_.chips(), 0);
    if (!race_tracks_[chip])
      race_tracks_[chip] = run_.trace().AddTrack(chips_[chip]->tracks().chip, "races", 900);
    for (const RaceAccess* a : {&race.earlier, &race.later}) {
      run_.trace().Instant(race_tracks_[chip], a->when, "race: " + a->what,
                           {{"by", chips_[a->chip]->DescribeCore(a->core)}, {"in", a->where}});
    }
  }
  throw Error(ErrorKind::kRace, message);
}

void SliceState::TakeCoreThreads() {
  // Now, when the inputs and scratch the run starts with are mapped too; a small run may be
  // given an earlier run's measurement instead (ThreadBudgetCache says when).
  live_threads_ = torus_.chips();
  const ThreadBudget budget = ThreadBudget::ForThisProcess(live_threads_, 0);
  if (live_threads_ > budget.threads())
    budget.Check(live_threads_, std::to_string(live_threads_) + " chips, one core each");
}

void SliceState::TakeActivityThread() {
  const ThreadBudget budget = ThreadBudget::ForThisProcess(live_threads_ + 1, live_threads_);
  if (live_threads_ + 1 > budget.threads()) {
    budget.Check(live_threads_ + 1, std::to_string(torus_.chips()) + " chips' cores and " +
                                        std::to_string(live_threads_ + 1 - torus_.chips()) +
                                        " activities (async ops of a program) in flight");
  }
  ++live_threads_;
}

void SliceState::AddChip(Chip& chip) {
  chips_.push_back(&chip);
  for (int slot = 0; slot < chip.memory_count(); ++slot)
    chip.memory_at(slot).CountFreesIn(buffer_frees_);
}

Memory& SliceState::memory(const BufferHandle& b) {
  return chips_[b.chip]->memory(b.space, b.core);
}

bool SliceState::BufferExists(const BufferHandle& b) const {
  return b.chip < chips() && b.core < chips_[b.chip]->core_count() &&
         (b.space != MemorySpace::kHbm || b.core == 0) &&
         chips_[b.chip]->memory(b.space, b.core).Live(b.index);
}

void SliceState::CheckBuffer(const BufferHandle& b, const char* role, const std::string& what) {
  if (!BufferExists(b)) {
    throw Error(ErrorKind::kKernelMisuse,
                what + ": the buffer " + role + " does not exist (freed, or never allocated).");
  }
}

void SliceState::CheckSemaphore(SemaphoreHandle h, const char* role, std::string_view what) {
  if (!HasSemaphore(h)) {
    throw Error(ErrorKind::kSemaphoreMisuse, std::string(what) + ": the semaphore " + role +
                                                 " does not exist; allocate it as scratch.");
  }
}

void SliceState::FailSemaphoreOverflow(SemaphoreHandle h, int64_t amount, const Touch* touch) {
  const Semaphore& s = semaphore(h);
  // Called from threads and from the calendar alike: fail the run, as both can.
  run_.Fail(ErrorKind::kSemaphoreMisuse,
            std::string(SemaphoreKindName(s.kind())) + " semaphore '" + s.name() + "' on " +
                torus_.Describe(h.chip) + " would pass its largest value, " +
                std::to_string(INT64_MAX) + ": it holds " + std::to_string(s.value()) + " and " +
                (touch ? touch->Describe() + " from " + torus_.Describe(touch->from)
                       : std::string("a DMA")) +
                " adds " + std::to_string(amount) +
                ". Signal smaller increments, or wait for (consume) what was signalled before "
                "signalling more.");
}

bool SliceState::AddToSemaphore(Semaphore& s, const SemaphoreHandle& h, int64_t amount,
                                const Touch* touch) {
  if (!s.Add(amount, touch)) [[unlikely]] {
    FailSemaphoreOverflow(h, amount, touch);
    return false;
  }
  if (s.counter_track())
    run_.trace().Counter(s.counter_track(), EventQueue::Now(), static_cast<double>(s.value()));
  // Below what every waiter needs, no Poke would wake anyone.
  if (!s.MayWake()) return true;
  // The one thread that waits on it is the one a walk of the chip's threads would poke; it
  // waits on, needing what it did, until it runs.
  if (CoreThread* thread = s.sole_waiter()) {
    thread->Poke(s, last_woken_);
    return true;
  }
  WakeWaiters(s, h.chip);
  return true;
}

void SliceState::WakeWaiters(Semaphore& s, ChipId chip) {
  // In the order the chip made its threads, which is the order they are made runnable.
  int64_t wake_at = INT64_MAX;
  size_t waiting = 0;
  CoreThread* last = nullptr;
  for (CoreThread* thread : by_chip_[chip].waiters) {
    thread->Poke(s, last_woken_);
    if (thread->waiting() == &s) {
      wake_at = std::min(wake_at, thread->wait_amount());
      ++waiting;
      last = thread;
    }
  }
  s.set_waiters(wake_at, waiting, last);
}

void SliceState::Signal(ChipId issuer, SemaphoreHandle target, int64_t amount,
                        uint32_t issuer_core) {
  if (target.chip >= torus_.chips()) {
    throw Error(ErrorKind::kKernelMisuse,
                torus_.Describe(issuer) + " signals chip " + std::to_string(target.chip) +
                    ", which is outside the " + std::to_string(torus_.chips()) + "-chip slice.");
  }
  CheckSemaphore(target, "signalled", "signal");
  Semaphore& s = semaphore(target);
  if (s.kind() == SemaphoreKind::kDma) {
    throw Error(ErrorKind::kSemaphoreMisuse,
                torus_.Describe(issuer) + " signals DMA semaphore '" + s.name() +
                    "'. DMA semaphores count bytes moved by DMAs; signal a REGULAR semaphore.");
  }
  if (amount <= 0) {
    throw Error(ErrorKind::kSemaphoreMisuse, torus_.Describe(issuer) + " signals '" + s.name() +
                                                 "' with " + std::to_string(amount) +
                                                 "; the increment must be positive.");
  }
  Touch touch{EventQueue::Now(), issuer, Touch::Kind::kSignal, amount, {}};
  const bool remote = issuer != target.chip;
  Picoseconds arrival = EventQueue::Now();
  if (remote) {
    const std::string* label = nullptr;
    if (run_.traced()) {
      std::string text = "signal: ";
      text += s.name();
      label = &run_.Label(text);
    }
    arrival = SendRemoteSignal(issuer, target, arrival, label);
  }
  if (observer_) {
    const uint32_t signal = observer_->SignalSent(issuer, issuer_core);
    if (!remote) observer_->SignalArrived(signal, target);
    if (remote) {
      calendar_->At(arrival, [this, target, amount, touch, signal] {
        observer_->SignalArrived(signal, target);
        AddToSemaphore(target, amount, &touch);
      });
      return;
    }
  }
  if (!remote) {
    // A kernel that signals past the range stops here, not at its next wait.
    if (!AddToSemaphore(target, amount, &touch)) throw Error(run_.error_kind(), run_.error());
  } else {
    calendar_->At(arrival,
                  [this, target, amount, touch] { AddToSemaphore(target, amount, &touch); });
  }
}

Picoseconds SliceState::SendRemoteSignal(ChipId from, SemaphoreHandle target, Picoseconds at,
                                         const std::string* label) {
  // Along the route, hop by hop through the links, as a DMA's chunks go; the semaphore
  // changes the signal latency after the packet reaches the destination's router.
  ChunkSchedule schedule(at, store_and_forward_);
  chips_[from]->router().SendSignal(SignalAddress(target.chip, target.index), schedule,
                                    run_.options().book_through_tlm, label);
  return schedule.arrival() + signal_latency_;
}

void SliceState::FailOnHostLimit() {
  run_.Fail(run_.watch().kind(), HostLimitReport(*this, EventQueue::Now()));
}

}  // namespace tpusim::sim
