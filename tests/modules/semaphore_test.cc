// Semaphores (sim/semaphore.h, SliceState::Signal) through a Slice and CorePort programs: a
// wait blocks until the semaphore holds enough and then takes exactly that much; signals
// add up; a signal to another chip arrives after the sum of its route's link latencies and
// its packet's time on a link (sim/chunk.h, kSignalBytes);
// the threads of one chip waiting on one semaphore are served in the order they were made.

#include <gtest/gtest.h>

#include <vector>

#include "sim/chunk.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::CorePort;
using base::SemaphoreHandle;
using base::SemaphoreKind;
using base::WaitKind;

constexpr Picoseconds kMicrosecond = 1'000'000;
constexpr uint64_t kMicrosecondOfCycles = 1500;  // v5e's 1.5 GHz clock
// What a remote signal's packet holds a link of the v5e preset for (45 GB/s): its route's
// links are of one speed, so cut through it adds this once.
const Picoseconds kPacket = base::TransferTime(sim::kSignalBytes, 4.5e10);

// Sets one link direction's latency: link_override { chip: [chip] direction: ... }.
void SetLatency(config::Topology& t, int chip, const char* direction, double ns) {
  auto* o = t.add_link_override();
  o->add_chip(static_cast<uint32_t>(chip));
  o->set_direction(direction);
  o->set_latency_ns(ns);
}

void Wait(CorePort& core, SemaphoreHandle s, int64_t amount) {
  core.Wait(s, amount, WaitKind::kSemaphore, "test wait");
}

// One microsecond of the core's own work.
void Work(CorePort& core) {
  core.Compute(base::ComputeUnit::kScalar, kMicrosecondOfCycles, "work");
}

TEST(Semaphore, AWaitBlocksUntilEnoughHasArrivedThenTakesExactlyThatMuch) {
  // Two chips 1 us apart; chip 1 signals chip 0 once a microsecond.
  sim::Simulation simulation(testing::MakeTopology({2}, {false}), TimingOnly());
  const SemaphoreHandle s = simulation.AddSemaphore(0, SemaphoreKind::kRegular, "s");
  std::vector<Picoseconds> woke;
  std::vector<int64_t> left;
  const auto outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() == 1) {
      for (int i = 0; i < 4; ++i) {
        core.Signal(s, i == 3 ? 2 : 1);  // arrive at 1, 2, 3 and 4 us (and a packet)
        Work(core);
      }
      return;
    }
    Wait(core, s, 3);  // the third signal arrives at 3 us
    woke.push_back(core.Now());
    left.push_back(core.Peek(s));
    Wait(core, s, 2);  // the fourth brings 2 at 4 us
    woke.push_back(core.Now());
    left.push_back(core.Peek(s));
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(woke,
            (std::vector<Picoseconds>{3 * kMicrosecond + kPacket, 4 * kMicrosecond + kPacket}));
  EXPECT_EQ(left, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(outcome.stats.cores[0].blocked, 4 * kMicrosecond + kPacket);
}

TEST(Semaphore, SignalsAccumulateAndAWaitConsumesOnlyItsAmount) {
  sim::Simulation simulation(testing::MakeTopology({1}, {false}), TimingOnly());
  const SemaphoreHandle s = simulation.AddSemaphore(0, SemaphoreKind::kRegular, "s");
  std::vector<int64_t> values;
  Picoseconds waited_until = 1;
  const auto outcome = simulation.Run([&](CorePort& core) {
    core.Signal(s, 2);
    core.Signal(s, 3);
    values.push_back(core.Peek(s));  // a local signal counts at once
    Wait(core, s, 4);                // enough is there: no time passes
    waited_until = core.Now();
    values.push_back(core.Peek(s));
    Wait(core, s, 1);
    values.push_back(core.Peek(s));
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(values, (std::vector<int64_t>{5, 1, 0}));
  EXPECT_EQ(waited_until, 0u);
  EXPECT_EQ(outcome.stats.cores[0].blocked, 0u);
}

TEST(Semaphore, ARemoteSignalArrivesAfterTheSumOfItsRoutesLinkLatencies) {
  // A line of four chips whose x+ links have latencies of 100, 250 and 400 ns; the x- links
  // keep the slice's 1 us.
  const auto topology = testing::MakeTopology({4}, {false}, [](config::Topology& t) {
    SetLatency(t, 0, "x+", 100);
    SetLatency(t, 1, "x+", 250);
    SetLatency(t, 2, "x+", 400);
  });
  sim::Simulation simulation(topology, TimingOnly());
  std::vector<SemaphoreHandle> s;
  for (ChipId chip = 0; chip < 4; ++chip)
    s.push_back(simulation.AddSemaphore(chip, SemaphoreKind::kRegular, "s"));
  std::vector<Picoseconds> arrived(4, 0);
  const auto outcome = simulation.Run([&](CorePort& core) {
    switch (core.chip()) {
      case 0:
        core.Signal(s[1], 1);  // 0 -> 1: 100 ns
        core.Signal(s[2], 1);  // 0 -> 2: 100 + 250 ns
        core.Signal(s[3], 1);  // 0 -> 3: 100 + 250 + 400 ns
        Wait(core, s[0], 1);   // from chip 3 over three x- links: 3 us
        break;
      case 3:
        core.Signal(s[0], 1);
        Wait(core, s[3], 1);
        break;
      default:
        Wait(core, s[core.chip()], 1);
    }
    arrived[core.chip()] = core.Now();
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(arrived, (std::vector<Picoseconds>{3 * kMicrosecond + kPacket, 100'000 + kPacket,
                                               350'000 + kPacket, 750'000 + kPacket}));
}

TEST(Semaphore, EachSignalServesOneWaitingThreadTheNewestFirst) {
  // Chip 0's core and an activity it spawned both wait for 1 on the same semaphore; chip 1's
  // signals arrive at 1 us and 2 us. Each signal serves one of them. Which one is decided by
  // SystemC: both are notified for the next delta cycle, oldest first, and SystemC triggers a
  // delta cycle's events newest first, so the activity (made after the core) is served first,
  // whichever began waiting first. (sim/semaphore.h says "in the order those threads were
  // made"; this pins what the model does.)
  for (bool activity_waits_first : {true, false}) {
    SCOPED_TRACE(activity_waits_first ? "the activity waits first" : "the core waits first");
    sim::Simulation simulation(testing::MakeTopology({2}, {false}), TimingOnly());
    const SemaphoreHandle s = simulation.AddSemaphore(0, SemaphoreKind::kRegular, "s");
    Picoseconds core_woke = 0;
    Picoseconds activity_woke = 0;
    const auto outcome = simulation.Run([&](CorePort& core) {
      if (core.chip() == 1) {
        core.Signal(s, 1);
        Work(core);
        core.Signal(s, 1);
        return;
      }
      const auto activity = core.Spawn("second waiter", [&](CorePort& port) {
        Wait(port, s, 1);
        activity_woke = port.Now();
      });
      if (activity_waits_first) core.YieldToSameTime();
      Wait(core, s, 1);
      core_woke = core.Now();
      core.Join(activity);
    });
    ASSERT_TRUE(outcome.ok) << outcome.error;
    EXPECT_EQ(activity_woke, kMicrosecond + kPacket);
    EXPECT_EQ(core_woke, 2 * kMicrosecond + kPacket);
  }
}

TEST(Semaphore, WaitersForDifferentAmountsEachWakeWhenTheirsHasArrived) {
  // A semaphore remembers the least any of its waiters needs, and an arrival below it looks
  // at no thread (Semaphore::MayWake). Chip 0's core waits for 3 from the start; its activity
  // starts waiting for 2 after the first signal arrived, lowering that least amount. Chip 1
  // signals 1 each microsecond, five times: the activity takes the first two, the core the
  // next three.
  sim::Simulation simulation(testing::MakeTopology({2}, {false}), TimingOnly());
  const SemaphoreHandle s = simulation.AddSemaphore(0, SemaphoreKind::kRegular, "s");
  Picoseconds core_woke = 0;
  Picoseconds activity_woke = 0;
  const auto outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() == 1) {
      for (int i = 0; i < 5; ++i) {
        core.Signal(s, 1);  // arrives at (i + 1) us and a packet's time
        Work(core);
      }
      return;
    }
    const auto activity = core.Spawn("waits for 2", [&](CorePort& port) {
      Work(port);
      Work(port);  // 2 us: the first signal is there, the second not yet
      Wait(port, s, 2);
      activity_woke = port.Now();
    });
    Wait(core, s, 3);
    core_woke = core.Now();
    core.Join(activity);
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(activity_woke, 2 * kMicrosecond + kPacket);
  EXPECT_EQ(core_woke, 5 * kMicrosecond + kPacket);
}

TEST(Semaphore, ASignalThatArrivesBeforeTheWaitIsKept) {
  sim::Simulation simulation(testing::MakeTopology({2}, {false}), TimingOnly());
  const SemaphoreHandle s = simulation.AddSemaphore(0, SemaphoreKind::kRegular, "s");
  Picoseconds woke = 0;
  const auto outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() == 1) return core.Signal(s, 1);  // arrives at 1 us
    for (int i = 0; i < 5; ++i)
      Work(core);
    Wait(core, s, 1);  // at 5 us: already there
    woke = core.Now();
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(woke, 5 * kMicrosecond);
  EXPECT_EQ(outcome.stats.cores[0].blocked, 0u);
}

}  // namespace
}  // namespace tpusim::modules
