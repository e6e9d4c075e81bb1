// What belongs to a run as a whole (sim/run_context.h), made on its own in a TEST: its first
// failure, its labels and ids, whether it traces, and that a slice's modules share the one
// the slice owns.

#include <gtest/gtest.h>

#include <string>

#include "sim/run_context.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"
#include "traces/trace_sink.h"

namespace tpusim::modules {
namespace {

using RunContextTest = ModuleTest;  // Fail pauses SystemC: a context of its own

TEST_F(RunContextTest, TheFirstFailureIsTheRunsError) {
  sim::RunContext run(TimingOnly());
  EXPECT_FALSE(run.failed());
  run.Fail(ErrorKind::kDeadlock, "the cores wait for each other");
  run.Fail(ErrorKind::kTimeLimit, "a consequence");
  EXPECT_TRUE(run.failed());
  EXPECT_EQ(run.error_kind(), ErrorKind::kDeadlock);
  EXPECT_EQ(run.error(), "the cores wait for each other");
}

TEST_F(RunContextTest, ALabelIsKeptOncePerTextForTheWholeRun) {
  sim::RunContext run(TimingOnly());
  const std::string& a = run.Label("signal: s");
  std::string same = "signal: ";
  same += "s";
  EXPECT_EQ(&run.Label(same), &a);  // ports keep the pointer
  EXPECT_NE(&run.Label("signal: t"), &a);
  EXPECT_EQ(a, "signal: s");
}

TEST_F(RunContextTest, FlowsCountUpAndStreamIdsNeverMeetThem) {
  sim::RunContext run(TimingOnly());
  const uint64_t first = run.NewFlow();
  EXPECT_EQ(run.NewFlow(), first + 1);
  const uint64_t stream = run.NewStreamId();
  EXPECT_NE(stream, first);
  EXPECT_NE(stream >> 63, 0u) << "a core's own HBM traffic is told apart by the top bit";
  EXPECT_EQ(run.NewStreamId(), stream + 1);
}

TEST_F(RunContextTest, ItTracesOnlyIntoASinkItWasGiven) {
  sim::RunContext untraced(TimingOnly());
  EXPECT_FALSE(untraced.traced());
  EXPECT_FALSE(untraced.trace_requested());
  traces::NullTraceSink sink;
  base::EngineOptions options = TimingOnly();
  options.trace = &sink;
  sim::RunContext traced(options);
  EXPECT_TRUE(traced.traced());
  EXPECT_TRUE(traced.trace_requested());
  EXPECT_EQ(&traced.trace(), &sink);
}

TEST(RunContext, TheSlicesRunCarriesItsOptionsNameAndStats) {
  base::EngineOptions options = TimingOnly();
  options.time_limit = 123'456'789;
  sim::Simulation simulation(testing::MakeTopology({2}, {false}), options);
  sim::RunContext& run = simulation.slice().state().run();
  EXPECT_EQ(run.options().time_limit, options.time_limit);
  EXPECT_FALSE(run.functional());
  // Each chip copies 1 KiB from its HBM into its VMEM: the run counts both DMAs.
  const base::RunOutcome outcome = simulation.Run(
      [](base::CorePort& core) {
        const base::ByteBox box{0, {1024}, {1}, 1};
        base::DmaRequest copy;
        copy.source = {core.Allocate(base::MemorySpace::kHbm, 1024, "src", {}), box};
        copy.destination = {core.Allocate(base::MemorySpace::kVmem, 1024, "dst", {}), box};
        copy.recv_semaphore = core.AddSemaphore(base::SemaphoreKind::kDma, "copy");
        copy.label = "copy";
        core.StartDma(copy);
        core.Wait(copy.recv_semaphore, 1024, base::WaitKind::kDma, "copy");
      },
      "copies");
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(run.run_name(), "copies");
  EXPECT_FALSE(run.failed());
  EXPECT_EQ(run.stats().dmas, 2u);
  EXPECT_EQ(run.stats().dma_bytes, 2048u);
  EXPECT_EQ(outcome.stats.dmas, run.stats().dmas);
}

}  // namespace
}  // namespace tpusim::modules
