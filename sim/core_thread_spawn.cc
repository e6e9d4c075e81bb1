// Threads of control a core starts and ends: spawning an activity (on this core or on
// another TensorCore of the chip), joining it, and running a thread's body to the end,
// turning whatever it throws into the run's failure.
//
// Spawning needs SystemC's dynamic processes, declared only with this macro defined before
// <systemc> is first included.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cxxabi.h>

#include <algorithm>
#include <new>
#include <tuple>

#include "sim/chip.h"
#include "sim/core_thread.h"
#include "sim/slice_state.h"
#include "sim/tensor_core.h"

namespace tpusim::sim {

namespace {
constexpr int kActivityTrackRank = 900;  // after the chip's fixed tracks
}  // namespace

CorePort::ActivityId CoreThread::Spawn(const std::string& name,
                                       std::function<void(CorePort&)> body) {
  return SpawnOn(core_, name, std::move(body));
}

CorePort::ActivityId CoreThread::SpawnOnCore(int core, const std::string& name,
                                             std::function<void(CorePort&)> body) {
  Chip& chip = core_.chip();
  if (core < 0 || static_cast<uint32_t>(core) >= chip.core_count()) {
    throw Error(ErrorKind::kKernelMisuse,
                chip.DescribeCore(core_.index()) + " starts '" + name + "' on core " +
                    std::to_string(core) + ", but the chip has " +
                    std::to_string(chip.core_count()) + " TensorCore" +
                    (chip.core_count() == 1 ? "" : "s") + "; pick a core in [0, " +
                    std::to_string(chip.core_count()) + ") (num_cores()).");
  }
  return SpawnOn(chip.core(static_cast<uint32_t>(core)), name, std::move(body));
}

int CoreThread::num_cores() const {
  return static_cast<int>(core_.chip().core_count());
}

int CoreThread::core_index() const {
  return static_cast<int>(core_index_);
}

// On `core`'s own track when no thread shows there (the other core of a megacore chip, idle
// until a pallas_call splits its grid), else on one of the chip's async tracks.
CorePort::ActivityId CoreThread::SpawnOn(TensorCore& core, const std::string& name,
                                         std::function<void(CorePort&)> body) {
  slice_.TakeActivityThread();  // before SystemC makes its stack
  size_t slot = kCoreTrackSlot;
  traces::TrackId track = core.tracks().core;
  TensorCore& keeper = core_.chip().core(0);  // the chip's async tracks are numbered once
  if (core.track_taken()) {
    std::tie(slot, track) = keeper.TakeActivityTrack(kActivityTrackRank);
  } else {
    core.set_track_taken(true);
  }
  auto& activities = slice_.activities();
  const auto id = static_cast<ActivityId>(activities.size());
  CoreThread* child = activities
                          .emplace_back(std::make_unique<CoreThread>(slice_, core, track,
                                                                     root_ ? root_ : this, name))
                          .get();
  child->track_slot_ = slot;
  child->track_keeper_ = &keeper;
  slice_.waiters(chip_).push_back(child);
  ++unjoined_;
  sc_core::sc_spawn_options options;
  options.set_stack_size(TensorCore::kThreadStackBytes);
  sc_core::sc_spawn([child, body = std::move(body)] { child->Body(body); },
                    ("activity_" + std::to_string(id)).c_str(), &options);
  return id;
}

void CoreThread::YieldToSameTime() {
  sc_core::wait(sc_core::SC_ZERO_TIME);
  stack_.Announce();
}

void CoreThread::Join(ActivityId id) {
  auto& activities = slice_.activities();
  if (id >= activities.size() || activities[id]->chip_ != chip_ || activities[id]->joined_) {
    throw Error(ErrorKind::kKernelMisuse, slice_.torus().Describe(chip_) + " joins activity " +
                                              std::to_string(id) +
                                              ", which it did not spawn or joined already.");
  }
  CoreThread& child = *activities[id];
  child.joined_ = true;
  --unjoined_;
  if (child.finished_) return;
  const Picoseconds since = Now();
  slice_.run().trace().Begin(track_, since, "join " + child.name_);
  joining_ = &child;
  while (!child.finished_) {
    sc_core::wait(child.events_->done);
    stack_.Announce();
  }
  joining_ = nullptr;
  stats_.blocked += Now() - since;
  slice_.run().trace().End(track_, Now());
}

void CoreThread::Body(const Engine::CoreProgram& program) {
  stack_ = ThreadStack(TensorCore::kThreadStackBytes);
  dma_ = &core_.chip().dma();
  MakeEvents();
  started_ = true;
  slice_.run().trace().Begin(track_, Now(), root_ ? name_ : slice_.run().run_name());
  try {
    program(*this);
    if (unjoined_ > 0) {
      throw Error(ErrorKind::kKernelMisuse,
                  slice_.torus().Describe(chip_) + " ends '" +
                      (root_ ? name_ : slice_.run().run_name()) + "' with " +
                      std::to_string(unjoined_) +
                      " spawned activities never joined; join every activity you start.");
    }
    CatchUp();  // may meet a host limit, which fails the run like any error
  } catch (const Error& e) {
    slice_.run().Fail(e.kind(), e.what());
    return;
  } catch (const sc_core::sc_unwind_exception&) {
    throw;  // SystemC is ending this suspended thread (SystemCContext::EndSuspendedThreads)
  } catch (const std::bad_alloc&) {
    // Sizes are checked against host memory before a run; this is the last resort, and it is
    // the host's memory, not a misuse of the kernel.
    slice_.run().Fail(ErrorKind::kCapacity,
                      slice_.torus().Describe(chip_) +
                          ": the simulator ran out of host memory while the kernel ran. Run it "
                          "timing-only (no payload, the same timing) or choose a smaller size.");
    return;
  } catch (const std::exception& e) {
    slice_.run().Fail(ErrorKind::kKernelMisuse, slice_.torus().Describe(chip_) +
                                                    ": the kernel threw an exception: " + e.what());
    return;
  } catch (const abi::__forced_unwind&) {
    throw;  // the host thread is being cancelled: not ours to stop
  } catch (...) {
    // Anything else would escape into SystemC, which reports it raw (E549) and aborts.
    slice_.run().Fail(
        ErrorKind::kKernelMisuse,
        slice_.torus().Describe(chip_) +
            ": the kernel threw an exception that is not a std::exception (e.g. `throw "
            "42;`), so it has no message to show. Throw a std::exception such as "
            "std::runtime_error(\"what went wrong\") instead.");
    return;
  }
  while (open_scopes_ > 0)
    EndScope();
  slice_.run().trace().End(track_, Now());
  finished_ = true;
  slice_.ReturnThread();
  stats_.finish = Now();
  if (root_) {  // the chip's units did this work; the track and the wake-up list move on
    root_->stats_.mxu_busy += stats_.mxu_busy;
    root_->stats_.vpu_busy += stats_.vpu_busy;
    root_->stats_.f32_dots_at_one_pass += stats_.f32_dots_at_one_pass;
    if (track_slot_ == kCoreTrackSlot) {
      core_.set_track_taken(false);
    } else {
      track_keeper_->ReleaseActivityTrack(track_slot_);
    }
    auto& waiters = slice_.waiters(chip_);
    waiters.erase(std::find(waiters.begin(), waiters.end(), this));
    events_->done.notify(sc_core::SC_ZERO_TIME);
  }
}

void CoreThread::CloseTrace(Picoseconds now, const std::string& why) {
  if (!started_) return;
  if (computing_on_) slice_.run().trace().End(computing_on_, now);  // stopped mid-op
  if (waiting_ || joining_ || polling_) slice_.run().trace().End(track_, now);
  while (open_scopes_ > 0)
    EndScope();
  slice_.run().trace().Instant(track_, now, why);
  slice_.run().trace().End(track_, now);  // the kernel slice
}

}  // namespace tpusim::sim
