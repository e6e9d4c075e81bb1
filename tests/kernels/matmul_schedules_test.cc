// The rest of the sharded-matmul schedules (docs/references.md §4): the bidirectional
// all-gather matmul, the reduce-scatter matmul and the matmul with both operands sharded on
// the contracting dim. Each kernel matches the host matmul on several meshes (tolerance:
// the kernels' own, 2e-2 for bf16 outputs: f32 accumulation in another order, then one
// rounding to bf16's 8-bit mantissa, i.e. a couple of ulps); the overlapped schedule beats
// the blocking one when compute per step exceeds transfer per step, and both approach the
// communication bound when transfer dominates.

#include <gtest/gtest.h>

#include "base/errors.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using testing::Measured;
using testing::RunTimed;

// Test-local meshes: rings with wraparound (odd and even), a 4x4 slice whose y axis wraps,
// and a 3x2 mesh whose K-blocks over x and K-chunks over y do not line up.
config::Topology TopologyNamed(const std::string& name) {
  if (name == "ring5") return testing::MakeTopology({5}, {true});
  if (name == "ring6") return testing::MakeTopology({6}, {true});
  if (name == "wrap4x4") return testing::MakeTopology({4, 4}, {false, true});
  if (name == "mesh3x2") return testing::MakeTopology({3, 2}, {false, false});
  return topologies::LoadTopology(name);
}

// The fraction of the MXU peak a dot sustains on `name` (chip.cost, docs/time-model.md).
double MxuEfficiency(const std::string& name) {
  return TopologyNamed(name).chip().cost().mxu_efficiency();
}

struct Case {
  std::string kernel;
  const char* topology;
  std::string axis;
  int64_t m, k, n;
};

class MatmulSchedulesCorrectness : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulSchedulesCorrectness, MatchesTheHostMatmulOnEveryChip) {
  const Case& c = GetParam();
  const kernels::Params args =
      testing::ParamsFor(c.kernel, {{"axis", c.axis}, {"m", c.m}, {"k", c.k}, {"n", c.n}});
  const dsl::Mesh mesh(TopologyNamed(c.topology));
  kernels::Workload w = testing::Entry(c.kernel).make(mesh, args);
  auto run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto check = dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string name = c.kernel + "_" + c.topology + "_" + c.axis;
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  // A[B, D] x W[D, F]: ring sizes 2 (the one other chunk split in halves), 4 and 6 (the
  // opposite chunk split), 5 (odd: the streams meet exactly).
  for (const Case& c :
       {Case{"", "v5e-2x2", "y", 256, 256, 512},
        Case{"", "v5e-4x4", "x", 512, 1024, 256},  // non-square
        Case{"", "ring5", "x", 40, 640, 1280}, Case{"", "ring6", "x", 48, 1536, 768}}) {
    Case bidi = c;
    bidi.kernel = "ag_matmul_collective_bidi";
    cases.push_back(bidi);
  }
  // Tmp[B, F] x W2[F, D].
  for (const char* kernel : {"matmul_rs_blocking", "matmul_rs_collective"}) {
    cases.push_back({kernel, "v5e-2x2", "y", 256, 256, 512});
    cases.push_back({kernel, "v5e-4x4", "x", 512, 1024, 2048});  // non-square
    cases.push_back({kernel, "ring5", "x", 40, 640, 1280});
  }
  // inputs[M_x, K_y] x weights[K_x, N].
  for (const char* kernel : {"agw_matmul_ar", "agw_matmul_ar_fused"}) {
    cases.push_back({kernel, "v5e-2x2", "x", 256, 512, 1024});  // the 2x2 case
    cases.push_back({kernel, "v5e-4x4", "y", 512, 1024, 2048});
    cases.push_back({kernel, "mesh3x2", "x", 96, 768, 512});  // pieces straddle K-blocks
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Schedules, MatmulSchedulesCorrectness, ::testing::ValuesIn(Cases()),
                         CaseName);

// The capacity semaphores matter only when devices drift apart: one chip multiplies 50x
// slower (RunOptions::chip_slowdown), so its neighbours run ahead and would overwrite
// slots it still reads. The data must stay right and no race may be reported.
TEST_P(MatmulSchedulesCorrectness, StaysCorrectWhenOneChipIsSlow) {
  const Case& c = GetParam();
  const kernels::Params args =
      testing::ParamsFor(c.kernel, {{"axis", c.axis}, {"m", c.m}, {"k", c.k}, {"n", c.n}});
  const dsl::Mesh mesh(TopologyNamed(c.topology));
  kernels::Workload w = testing::Entry(c.kernel).make(mesh, args);
  dsl::RunOptions options;
  options.chip_slowdown.assign(mesh.devices(), 1.0);
  options.chip_slowdown[1] = 50;
  const auto run = testing::RunAndCheckTrace(w.program, w.inputs, options, "slow");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto check = dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;
}

TEST(AgwMatmul, RefusesAOneDimensionalMesh) {
  const kernels::ParamValues args = {{"m", 64}, {"k", 640}, {"n", 1280}};
  const dsl::Mesh mesh(TopologyNamed("ring5"));
  for (const char* kernel : {"agw_matmul_ar", "agw_matmul_ar_fused"}) {
    try {
      testing::Entry(kernel).make(mesh, testing::ParamsFor(kernel, args));
      ADD_FAILURE() << kernel << " accepted a 1-D mesh";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("two axes"), std::string::npos) << e.what();
    }
  }
}

kernels::ParamValues TimingArgs(const std::string& axis, int64_t m, int64_t k, int64_t n) {
  return {{"axis", axis}, {"m", m}, {"k", k}, {"n", n}};
}

TEST(AgMatmulBidi, MatchesTheUnidirectionalScheduleWhenComputeDominates) {
  // A wrapped ring of 4: per step 2 chunks of compute, 2 x 2 x 1024 x 2048 x 4096 /
  // 1.97e14 = 174 us, against 4 MiB each way, 93 us of transfer.
  const auto args = TimingArgs("y", 4096, 8192, 16384);
  const Measured blocking = RunTimed("ag_matmul_blocking", TopologyNamed("wrap4x4"), args);
  const Measured uni = RunTimed("ag_matmul_collective", TopologyNamed("wrap4x4"), args);
  const Measured bidi = RunTimed("ag_matmul_collective_bidi", TopologyNamed("wrap4x4"), args);
  EXPECT_LT(bidi.seconds, 0.85 * blocking.seconds);
  EXPECT_LT(bidi.seconds, 1.04 * uni.seconds);  // both hide the transfer
  // On a ring of 4 the unhidden prologue (own chunk and first W chunk from HBM, ~25 us),
  // step 0 (one chunk of compute against a whole chunk of transfer) and the output store
  // are ~10% of the run; on v5e-16x16 the same schedule leaves 5% exposed.
  EXPECT_LT(bidi.exposed_fraction, 0.2);
  EXPECT_LT(bidi.exposed_fraction, blocking.exposed_fraction);
  // The bound is at the MXU peak; dots run at the chip's calibrated fraction of it.
  EXPECT_LT(bidi.seconds, 1.2 / MxuEfficiency("wrap4x4") * bidi.bound_seconds);
}

TEST(AgMatmulBidi, HalvesTheTransferWhenItDominates) {
  // Per step 512 KiB each way (11.7 us) against 0.34 us of compute: the bidirectional ring
  // needs 2 steps instead of 3, with both directions busy; bound (V_A/W_ici)(Y-1)/Y.
  const auto args = TimingArgs("y", 256, 16384, 512);
  const Measured uni = RunTimed("ag_matmul_collective", TopologyNamed("wrap4x4"), args);
  const Measured bidi = RunTimed("ag_matmul_collective_bidi", TopologyNamed("wrap4x4"), args);
  EXPECT_GE(bidi.seconds, bidi.bound_seconds);
  EXPECT_LT(bidi.seconds, 1.35 * bidi.bound_seconds);
  EXPECT_LT(bidi.seconds, 0.8 * uni.seconds);
}

TEST(MatmulRsSchedules, CollectiveHidesTransfersWhenComputePerStepDominates) {
  // Per step: compute 2 x 512 x 16384 x 1024 / 1.97e14 = 87 us; transfer of the f32
  // partial chunk 512 x 1024 x 4 B / 4.5e10 = 47 us.
  const auto args = TimingArgs("y", 2048, 65536, 4096);
  const Measured blocking = RunTimed("matmul_rs_blocking", TopologyNamed("wrap4x4"), args);
  const Measured collective = RunTimed("matmul_rs_collective", TopologyNamed("wrap4x4"), args);
  EXPECT_LT(collective.seconds, 0.85 * blocking.seconds);
  // What stays exposed is mostly local: Tmp (16 MiB) and the first W2 chunk (32 MiB) come
  // from HBM before the first multiply, ~60 us of ~430 us.
  EXPECT_LT(collective.exposed_fraction, 0.22);
  EXPECT_GT(blocking.exposed_fraction, 0.25);  // its reduce-scatter is exposed
  EXPECT_LT(collective.exposed_fraction, blocking.exposed_fraction);
}

TEST(MatmulRsSchedules, BothApproachTheCommunicationBoundWhenTransferDominates) {
  // Per step: compute 2 x 512 x 128 x 4096 / 1.97e14 = 2.7 us; transfer 8 MiB / 4.5e10
  // = 186 us. The bound is the ring reduce-scatter of the f32 partial; within 1.35x.
  const auto args = TimingArgs("y", 2048, 512, 16384);
  const Measured blocking = RunTimed("matmul_rs_blocking", TopologyNamed("wrap4x4"), args);
  const Measured collective = RunTimed("matmul_rs_collective", TopologyNamed("wrap4x4"), args);
  for (const Measured& m : {blocking, collective}) {
    EXPECT_GE(m.seconds, m.bound_seconds);
    EXPECT_LT(m.seconds, 1.35 * m.bound_seconds);
  }
  EXPECT_LE(collective.seconds, blocking.seconds);
}

TEST(AgwMatmulSchedules, FusedOverlapsTheWeightsAndTheAllReduceWithCompute) {
  // v5e-2x2, per column chunk (N/8 = 256 columns): compute 2 x 4608 x 9216 x 256 / 1.97e14
  // = 110 us, weight rows 9216 x 256 x 2 B / 4.5e10 = 105 us, all-reduce of the f32
  // partial 4608 x 256 x 4 B / 4.5e10 = 105 us (A_ij, 81 MiB, nearly fills VMEM: the
  // weights need bm > 4378 rows and the f32 all-reduce K/Y > 8756 to be hidden on v5e).
  // The blocking schedule pays the three in sequence and gathers all of W; the fused one
  // runs them side by side. What stays exposed: loading A_ij from HBM (~100 us), the first
  // weight chunk and the last chunk's all-reduce.
  const auto args = TimingArgs("x", 9216, 18432, 2048);
  const auto topology = topologies::LoadTopology("v5e-2x2");
  const Measured blocking = RunTimed("agw_matmul_ar", topology, args);
  const Measured fused = RunTimed("agw_matmul_ar_fused", topology, args);
  EXPECT_LT(fused.seconds, 0.6 * blocking.seconds);
  EXPECT_LT(fused.exposed_fraction, 0.3);
  EXPECT_GT(blocking.exposed_fraction, 0.5);
  EXPECT_LT(fused.seconds, 1.35 / topology.chip().cost().mxu_efficiency() * fused.bound_seconds);
}

TEST(AgwMatmulSchedules, BothApproachTheCommunicationBoundWhenWeightsDominate) {
  // v5e-2x2: 4096 weight rows x 8192 columns must reach the off-diagonal devices (1.49 ms);
  // compute 44 us, all-reduce 93 us. Within 1.35x of the bound.
  const auto args = TimingArgs("x", 256, 8192, 8192);
  const auto topology = topologies::LoadTopology("v5e-2x2");
  const Measured blocking = RunTimed("agw_matmul_ar", topology, args);
  const Measured fused = RunTimed("agw_matmul_ar_fused", topology, args);
  for (const Measured& m : {blocking, fused}) {
    EXPECT_GE(m.seconds, m.bound_seconds);
    EXPECT_LT(m.seconds, 1.35 * m.bound_seconds);
  }
  EXPECT_LE(fused.seconds, blocking.seconds);
}

}  // namespace
}  // namespace tpusim
