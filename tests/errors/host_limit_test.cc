// Never a hang on the host's side: a loop whose steps cost no simulated time never meets
// the simulated-time limit, so the run's wall-clock limit ends it, with the same kind of
// report; a caller's interrupt (the Python module's Ctrl-C) ends a run the same way. The
// trace is written up to the stop in both cases.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

void CopyShard(Kernel& k, const Refs& r) {
  AsyncCopy copy = k.async_copy(r[0], r[1], r[2]);
  copy.start();
  copy.wait();
}

// Chip 1 opens and closes named scopes forever: work the core does, at no simulated cost.
ShardMap Runaway() {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copied")};
  PallasCall call = pallas_call("runaway",
                                [](Kernel& k, const Refs& r) {
                                  CopyShard(k, r);
                                  if (k.device_id() != 1) return;
                                  for (;;) {
                                    const NamedScope step = k.named_scope("step");
                                  }
                                },
                                grid, {{{256}, DType::kF32}});
  return shard_map(Mesh(testing::MakeTopology({4}, {false})), {P{"x"}}, {P{"x"}}, call);
}

TEST(HostLimits, ALoopThatCostsNoSimulatedTimeMeetsTheWallLimit) {
  RunOptions options;
  options.wall_limit_s = 0.2;
  auto run = testing::RunAndCheckTrace(Runaway(), {Array::Random({4 * 256}, DType::kF32, 3)},
                                       options, "runaway");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kTimeLimit) << run.result.error;
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("the kernel ran past the host wall-clock limit of 0.2 s "
                           "(wall_limit) at "));
  EXPECT_THAT(e, HasSubstr("Still running or waiting:"));
  EXPECT_THAT(e, HasSubstr("never meets the simulated-time limit"));
}

TEST(HostLimits, ACallersInterruptEndsTheRun) {
  int polls = 0;
  RunOptions options;
  options.interrupted = [&polls] { return ++polls == 3; };
  auto run = testing::RunAndCheckTrace(Runaway(), {Array::Random({4 * 256}, DType::kF32, 3)},
                                       options, "interrupted");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kInterrupted) << run.result.error;
  EXPECT_THAT(run.result.error,
              HasSubstr("the run stopped on an interrupt from the caller (e.g. Ctrl-C) at "));
  EXPECT_EQ(polls, 3) << "once interrupted, the run asks no more";
}

TEST(HostLimits, ARunWithinItsLimitsIsUnchanged) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copied")};
  const ShardMap copy = shard_map(Mesh(testing::MakeTopology({4}, {false})), {P{"x"}}, {P{"x"}},
                                  pallas_call("copy", CopyShard, grid, {{{256}, DType::kF32}}));
  const Array x = Array::Random({4 * 256}, DType::kF32, 3);
  RunOptions watched;
  watched.wall_limit_s = 60;
  watched.interrupted = [] { return false; };
  const RunResult limited = copy.Run({x}, watched);
  const RunResult free = copy.Run({x}, RunOptions{});
  ASSERT_TRUE(limited.ok) << limited.error;
  ASSERT_TRUE(free.ok) << free.error;
  EXPECT_EQ(limited.stats.end_time, free.stats.end_time);
  EXPECT_EQ(limited.outputs[0].bytes(), x.bytes());
}

}  // namespace
}  // namespace tpusim
