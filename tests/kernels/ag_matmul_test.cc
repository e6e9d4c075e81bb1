// The all-gather matmul family: both schedules compute A x W on every chip, and the
// collective schedule hides its communication exactly when compute per step exceeds
// transfer per step (docs/references.md §4).

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using testing::Measured;
using testing::RunTimed;

// A 4x4 v5e slice whose ring axis y has wraparound, so the ring has no long way round.
config::Topology RingOf4() {
  return testing::MakeTopology({4, 4}, {false, true});
}

struct Case {
  const char* topology;
  std::string axis;
  int64_t m, k, n;
};

class AgMatmulCorrectness : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

TEST_P(AgMatmulCorrectness, MatchesTheHostMatmulOnEveryChip) {
  const std::string& kernel = std::get<0>(GetParam());
  const Case& c = std::get<1>(GetParam());
  const auto topology = std::string(c.topology) == "ring5" ? testing::MakeTopology({5}, {true})
                                                           : topologies::LoadTopology(c.topology);
  const kernels::ParamValues args = {{"axis", c.axis}, {"m", c.m}, {"k", c.k}, {"n", c.n}};
  const dsl::Mesh mesh(topology);
  kernels::Workload w = testing::Entry(kernel).make(mesh, testing::ParamsFor(kernel, args));
  auto run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto check = dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<std::string, Case>>& info) {
  const std::string& kernel = std::get<0>(info.param);
  const Case& c = std::get<1>(info.param);
  std::string name = kernel + "_" + c.topology + "_" + c.axis;
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

const Case kCases[] = {
    {"v5e-2x2", "y", 256, 256, 512},
    {"v5e-4x4", "x", 512, 1024, 256},  // non-square, B sharded over y
    {"ring5", "x", 40, 640, 1280},     // odd ring, B not sharded
};

INSTANTIATE_TEST_SUITE_P(Schedules, AgMatmulCorrectness,
                         ::testing::Combine(::testing::Values("ag_matmul_blocking",
                                                              "ag_matmul_collective"),
                                            ::testing::ValuesIn(kCases)),
                         CaseName);

TEST(AgMatmulSchedules, CollectiveHidesTransfersWhenComputePerStepDominates) {
  // Per step: compute 2 bm dk fn / 1.97e14 = 174 us; transfer bm dk 2 B / 4.5e10 = 93 us.
  const kernels::ParamValues args = {{"axis", "y"}, {"m", 4096}, {"k", 8192}, {"n", 32768}};
  const Measured blocking = RunTimed("ag_matmul_blocking", RingOf4(), args);
  const Measured collective = RunTimed("ag_matmul_collective", RingOf4(), args);
  EXPECT_LT(collective.seconds, 0.85 * blocking.seconds);
  EXPECT_LT(collective.exposed_fraction, 0.15);
  EXPECT_GT(blocking.exposed_fraction, 0.25);  // its gather is exposed
}

TEST(AgMatmulSchedules, BothApproachTheCommunicationBoundWhenTransferDominates) {
  // Per step: compute 2 x 64 x 4096 x 128 / 1.97e14 = 0.34 us; transfer 512 KiB / 4.5e10
  // = 11.7 us. The bound is the ring all-gather of A; tolerance: within 1.35x of it.
  const kernels::ParamValues args = {{"axis", "y"}, {"m", 256}, {"k", 16384}, {"n", 512}};
  const Measured blocking = RunTimed("ag_matmul_blocking", RingOf4(), args);
  const Measured collective = RunTimed("ag_matmul_collective", RingOf4(), args);
  for (const Measured& m : {blocking, collective}) {
    EXPECT_GE(m.seconds, m.bound_seconds);
    EXPECT_LT(m.seconds, 1.35 * m.bound_seconds);
  }
  EXPECT_LE(collective.seconds, blocking.seconds);
}

}  // namespace
}  // namespace tpusim
