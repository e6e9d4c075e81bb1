#include "sim/reports.h"

#include <sstream>

#include "sim/chip.h"
#include "sim/core_thread.h"
#include "sim/slice_state.h"
#include "sim/tensor_core.h"

namespace tpusim::sim {

std::string DescribeWaiters(const SliceState& slice) {
  const Torus& torus = slice.torus();
  std::ostringstream text;
  std::vector<ChipId> finished;
  auto describe = [&](const CoreThread& core) {
    // On a chip of several cores, which one ("chip (0,1) core 1"); a core's share of a
    // megacore grid runs on that core's own track, an async collective beside it.
    std::string who = core.core().chip().DescribeCore(core.core().index());
    if (!core.name().empty()) {
      who += core.on_core_track() ? " ('" : " (async '";
      who += core.name();
      who += "')";
    }
    if (core.joining()) {
      text << "\n  " << who << " waits to join async '" << core.joining()->name() << "'.";
      return;
    }
    const Semaphore* s = core.waiting();
    if (const Semaphore* polled = core.polling(); polled && !s) {
      text << "\n  " << who << " polls " << SemaphoreKindName(polled->kind()) << " semaphore '"
           << polled->name() << "' with semaphore_read (" << core.poll_reads()
           << " reads since it last did anything else): value " << polled->value() << "; "
           << polled->DescribeRecent(torus.grid()) << ".";
      return;
    }
    if (!s) return;
    text << "\n  " << who << " waits in " << core.wait_what() << " on "
         << SemaphoreKindName(s->kind()) << " semaphore '" << s->name() << "': value " << s->value()
         << ", needs " << core.wait_amount() << "; " << s->DescribeRecent(torus.grid()) << ".";
  };
  for (const CoreThread* core : slice.cores()) {
    if (core->finished()) {
      finished.push_back(core->chip());
      continue;
    }
    describe(*core);
  }
  for (const auto& activity : slice.activities()) {
    if (!activity->finished()) describe(*activity);
  }
  if (!finished.empty()) {
    text << "\n  Finished their kernels, so they will send nothing more:";
    for (size_t i = 0; i < finished.size() && i < 16; ++i)
      text << (i ? ", " : " ") << torus.Describe(finished[i]);
    if (finished.size() > 16) text << " and " << finished.size() - 16 << " more";
    text << ".";
  }
  return text.str();
}

std::string DeadlockReport(const SliceState& slice, Picoseconds now) {
  size_t blocked = 0;
  for (const CoreThread* core : slice.cores())
    blocked += !core->finished();
  std::ostringstream text;
  text << "deadlock at " << FormatTime(now) << ": " << blocked << " of " << slice.cores().size()
       << " chips are blocked and no DMA or signal in flight can wake them. Wait-for graph:"
       << DescribeWaiters(slice)
       << "\n  Check that every wait has a matching DMA or signal, and that each DMA's "
          "receive semaphore and byte count match the descriptor the receiver waits with.";
  return text.str();
}

std::string SpinReport(const SliceState& slice, Picoseconds now) {
  return "livelock at " + FormatTime(now) +
         ": a core spins with semaphore_read on a semaphore that nothing left in the model "
         "can change (every other core has finished or is blocked, and no DMA or signal is "
         "in flight):" +
         DescribeWaiters(slice) +
         "\n  Signal the semaphore from the core or DMA meant to, or wait on it with "
         "semaphore_wait so a missing signal shows as a deadlock.";
}

std::string TimeLimitReport(const SliceState& slice) {
  std::string report = "the kernel ran past the simulated-time limit of ";
  report += FormatTime(slice.run().options().time_limit);
  report += " without finishing. Still running or waiting:";
  report += DescribeWaiters(slice);
  report +=
      "\n  Raise the run's time limit (time_limit) if the work is really that long, or look "
      "for a loop that never ends.";
  return report;
}

std::string HostLimitReport(const SliceState& slice, Picoseconds now) {
  const HostWatch& watch = slice.run().watch();
  const bool interrupted = watch.kind() == ErrorKind::kInterrupted;
  std::string report = interrupted ? "the run stopped on " : "the kernel ran past ";
  report += watch.Limit();
  report += " at ";
  report += FormatTime(now);
  report += " of simulated time";
  report += interrupted ? "." : " without finishing.";
  report += " Still running or waiting:";
  report += DescribeWaiters(slice);
  if (!interrupted) {
    report +=
        "\n  Raise the run's wall-clock limit (wall_limit) if the run is really that long, "
        "or look for a loop that never ends: one whose steps cost no simulated time never "
        "meets the simulated-time limit.";
  }
  return report;
}

void CheckSemaphoresAtExit(SliceState& slice) {
  const Torus& torus = slice.torus();
  std::ostringstream text;
  int problems = 0;
  for (ChipId chip = 0; chip < slice.chips(); ++chip) {
    for (const Semaphore& s : slice.semaphores(chip)) {
      if (s.value() == 0) continue;
      if (++problems > 16) continue;
      text << "\n  " << torus.Describe(chip) << " ends its kernel with "
           << SemaphoreKindName(s.kind()) << " semaphore '" << s.name() << "' at " << s.value()
           << "; " << s.DescribeRecent(torus.grid()) << ".";
    }
  }
  if (problems == 0) return;
  if (problems > 16) text << "\n  ... and " << problems - 16 << " more.";
  slice.run().Fail(
      ErrorKind::kSemaphoreNotZero,
      std::to_string(problems) +
          " semaphore(s) are not zero at kernel exit, but every semaphore must be 0 when "
          "the kernel ends:" +
          text.str() +
          "\n  Wait for every DMA you start (wait_send on the sender, wait_recv on the "
          "receiver; DMA semaphores count bytes) and consume every signal.");
}

}  // namespace tpusim::sim
