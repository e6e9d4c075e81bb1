// RunConfig::leave_model_at_exit (the CLI's `run` sets it): the run's model is kept, not taken
// apart, and nothing a caller sees changes: not the run's outputs and time, and not a later
// run's in the same process.

#include <gtest/gtest.h>

#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

TEST(LeaveModelAtExit, ChangesNeitherTheRunNorTheNextOne) {
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}));
  kernels::Workload w =
      testing::Entry("all_reduce_ring")
          .make(mesh, testing::ParamsFor("all_reduce_ring", {{"bytes", 4096 * 4}}));
  const auto plain = w.program.Run(w.inputs, dsl::RunOptions{});
  ASSERT_TRUE(plain.ok) << plain.error;
  ASSERT_EQ(plain.outputs.size(), 1u);
  dsl::RunOptions leave;
  leave.leave_model_at_exit = true;
  for (int run = 0; run < 2; ++run) {
    const auto left = w.program.Run(w.inputs, leave);
    ASSERT_TRUE(left.ok) << left.error;
    EXPECT_EQ(left.time(), plain.time()) << "run " << run;
    ASSERT_EQ(left.outputs.size(), 1u);
    EXPECT_TRUE(left.outputs[0].SameBytes(plain.outputs[0])) << "run " << run;
  }
  // A run after them builds and takes apart its own model, as before.
  const auto after = w.program.Run(w.inputs, dsl::RunOptions{});
  ASSERT_TRUE(after.ok) << after.error;
  EXPECT_EQ(after.time(), plain.time());
  ASSERT_EQ(after.outputs.size(), 1u);
  EXPECT_TRUE(after.outputs[0].SameBytes(plain.outputs[0]));
}

}  // namespace
}  // namespace tpusim
