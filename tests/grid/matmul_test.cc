// The tiled matmul kernel: correct against the host reference for several blockings, and
// its simulated time against the roofline of docs/references.md §1.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "kernels/matmul.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

const kernels::KernelInfo& Matmul() {
  const kernels::KernelInfo* info = kernels::Registry::Get().Find("matmul");
  EXPECT_NE(info, nullptr);
  return *info;
}

// The matmul kernel's parameters; a block size of 0 is left to the kernel.
kernels::Params Args(int64_t m, int64_t k, int64_t n, int64_t bm, int64_t bk, int64_t bn,
                     DType dtype = DType::kBF16, bool functional = true) {
  kernels::ParamValues values = {{"m", m}, {"k", k}, {"n", n}, {"dtype", dtype}};
  for (const auto& [name, block] :
       {std::pair<const char*, int64_t>{"bm", bm}, {"bk", bk}, {"bn", bn}})
    if (block) values.emplace(name, block);
  return testing::ParamsFor("matmul", values, functional);
}

// What PlanMatmul is asked for: the problem, default blocks.
kernels::MatmulPlan Problem(int64_t m, int64_t k, int64_t n) {
  kernels::MatmulPlan plan;
  plan.m = m;
  plan.k = k;
  plan.n = n;
  return plan;
}

struct Case {
  int64_t m, k, n, bm, bk, bn;
  DType dtype;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << DTypeName(c.dtype) << " [" << c.m << ", " << c.k << "] @ [" << c.k << ", " << c.n
      << "], blocks " << c.bm << "x" << c.bk << "x" << c.bn;
}

class MatmulCorrectness : public ::testing::TestWithParam<Case> {};

// Every chip of a 2-chip slice computes the whole product from its own copy of a and b.
// Tolerance: the kernel accumulates in f32 one bk-block at a time, the reference in one
// Eigen pass, so the f32 sums differ in rounding; a bf16 output can then round to the
// neighbouring bf16 value, one ulp = 2^-8 relative. rtol 1e-2 covers that and nothing
// more (a wrong block or a missed k step is off by O(1)); f32 outputs use 1e-4.
TEST_P(MatmulCorrectness, MatchesTheHostReference) {
  const Case c = GetParam();
  const Mesh mesh(testing::MakeTopology({2}, {false}));
  kernels::Workload w = Matmul().make(mesh, Args(c.m, c.k, c.n, c.bm, c.bk, c.bn, c.dtype));
  // f32 at DEFAULT precision is one bf16 pass: operands rounded to bf16, so the tolerance
  // is bf16's, not f32's (docs/references.md §1, "Matmul precision").
  EXPECT_DOUBLE_EQ(w.rtol, 1e-2);
  auto run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const Comparison check = CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;
}

INSTANTIATE_TEST_SUITE_P(
    Blockings, MatmulCorrectness,
    ::testing::Values(Case{256, 512, 384, 128, 128, 128, DType::kBF16},  // grid (2, 3, 4)
                      Case{384, 256, 256, 128, 256, 128, DType::kBF16},  // bk == K: grid (3, 2, 1)
                      Case{128, 384, 512, 64, 128, 256, DType::kBF16},   // grid (2, 2, 3)
                      Case{256, 256, 256, 256, 256, 256, DType::kBF16},  // one block
                      Case{96, 256, 128, 32, 128, 128, DType::kF32},     // f32, grid (3, 1, 2)
                      Case{512, 2048, 256, 0, 0, 0, DType::kBF16}),      // default blocks
    [](const auto& info) {
      const Case& c = info.param;
      std::ostringstream name;
      name << c.m << "x" << c.k << "x" << c.n << "_blocks_" << c.bm << "x" << c.bk << "x" << c.bn
           << "_" << DTypeName(c.dtype);
      return name.str();
    });

TEST(MatmulPlan, DefaultsArePallasDocBlocksShrunkToTheProblem) {
  const auto big = kernels::PlanMatmul(Problem(2048, 2048, 1024));
  EXPECT_EQ(big.bm, 512);
  EXPECT_EQ(big.bk, 1024);
  EXPECT_EQ(big.bn, 1024);
  EXPECT_EQ(big.grid, (std::vector<int>{4, 1, 2}));
  const auto small = kernels::PlanMatmul(Problem(96, 384, 640));
  EXPECT_EQ(small.bm, 96);
  EXPECT_EQ(small.bk, 384);
  EXPECT_EQ(small.bn, 640);
}

TEST(MatmulPlan, BlocksBreakingTheTilingRuleNameTheOperand) {
  const Mesh mesh(testing::MakeTopology({1}, {false}));
  kernels::Workload w = Matmul().make(mesh, Args(256, 256, 256, 100, 256, 256));
  try {
    w.program.Run(w.inputs, {});
    FAIL() << "expected a BlockSpec error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("matmul: BlockSpec for input 0 ('a') has block (100, 256), "
                                    "but the last two dims must be multiples of (8, 128) or "
                                    "equal the array dims (256, 256)"));
  }
}

// The HBM traffic the roofline assumes is what the simulated DMAs moved.
TEST(MatmulRoofline, HbmBytesMatchTheDmasOfTheBlocking) {
  const Mesh mesh(testing::MakeTopology({1}, {false}));
  for (const auto& args :
       {Args(1024, 1024, 1024, 256, 256, 256, DType::kBF16, false),
        Args(1024, 512, 1024, 256, 512, 256, DType::kBF16, false)}) {  // bk == K: a read once
    kernels::Workload w = Matmul().make(mesh, args);
    const kernels::Bound bound = Matmul().bound(mesh, args);
    RunOptions options;
    options.functional = false;
    const RunResult result = w.program.Run(w.inputs, options);
    ASSERT_TRUE(result.ok) << result.error;
    const auto& hbm = result.stats.memories[0];
    ASSERT_THAT(hbm.name, HasSubstr("HBM"));
    EXPECT_DOUBLE_EQ(static_cast<double>(hbm.bytes), bound.hbm_bytes) << bound.formula;
  }
  const kernels::Bound once = Matmul().bound(mesh, Args(1024, 512, 1024, 256, 512, 256));
  EXPECT_THAT(once.formula, HasSubstr("a read 1x, b read 4x"));
}

// Fidelity, docs/references.md §1 and the Pallas matmul guide: with (512, 1024, 1024) bf16
// blocks a tile's intensity is 512*1024/(512+1024) = 341 FLOP/byte, above v5e's ridge of
// ~240, so the MXU is the bottleneck and the guide reports 80-90% of peak. The simulated
// kernel must reach 80-100% of the peak MXU FLOP/s. Timing-only: the time is identical.
TEST(MatmulRoofline, LargeBlocksReachTheMxuPeakOnV5e) {
  const Mesh mesh(testing::MakeTopology({1}, {false}));
  const auto args = Args(4096, 4096, 4096, 512, 1024, 1024, DType::kBF16, false);
  kernels::Workload w = Matmul().make(mesh, args);
  const kernels::Bound bound = Matmul().bound(mesh, args);
  EXPECT_NEAR(bound.peak_flops, 1.97e14, 0.01e14);
  ASSERT_GE(bound.flops / bound.peak_flops, bound.hbm_bytes / bound.hbm_bytes_per_s)
      << "this case should be compute-bound";
  auto run = testing::RunWorkload(w, false);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const double seconds = static_cast<double>(run.result.time()) * 1e-12;
  const double fraction = bound.flops / seconds / bound.peak_flops;
  EXPECT_GE(fraction, 0.80) << "achieved " << bound.flops / seconds << " FLOP/s";
  EXPECT_LE(fraction, 1.0);
  // The MXU is busy for the whole FLOP count at the chip's calibrated fraction of its peak
  // (chip.cost.mxu_efficiency, docs/time-model.md).
  const double mxu = static_cast<double>(run.result.stats.cores[0].mxu_busy) * 1e-12;
  const double efficiency = mesh.topology().chip().cost().mxu_efficiency();
  EXPECT_NEAR(mxu * efficiency, bound.flops / bound.peak_flops, 1e-3 * mxu);
}

// Narrow (128, 2048, 128) blocks: intensity 128*128/(128+128) = 64 FLOP/byte, far below
// the ridge, so HBM bandwidth limits the kernel. The pipeline keeps HBM busy, so the
// simulated time is within 10% of HBM bytes / HBM bandwidth. (With bk = 512 the 1024
// grid steps' fixed cost, ~0.33 us each, would take as long as the HBM traffic.)
TEST(MatmulRoofline, SmallBlocksAreLimitedByHbmBandwidth) {
  const Mesh mesh(testing::MakeTopology({1}, {false}));
  const auto args = Args(2048, 2048, 2048, 128, 2048, 128, DType::kBF16, false);
  kernels::Workload w = Matmul().make(mesh, args);
  const kernels::Bound bound = Matmul().bound(mesh, args);
  const double memory = bound.hbm_bytes / bound.hbm_bytes_per_s;
  ASSERT_GT(memory, 2 * bound.flops / bound.peak_flops) << "this case should be HBM-bound";
  EXPECT_DOUBLE_EQ(bound.seconds, memory);
  auto run = testing::RunWorkload(w, false);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const double seconds = static_cast<double>(run.result.time()) * 1e-12;
  EXPECT_GE(memory / seconds, 0.90) << "simulated " << seconds << " s, HBM bound " << memory;
  EXPECT_LE(memory / seconds, 1.0 + 1e-9);
}

nlohmann::json LastLineJson(const std::string& out) {
  const auto end = out.find_last_not_of('\n');
  const auto start = out.rfind('\n', end);
  return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
}

TEST(MatmulCli, RunReportsFlopsMxuUtilisationAndTheRoofline) {
  const auto r = testing::RunTpusim(
      "run matmul --topology v5e-2x2 --m 256 --k 512 --n 384 --bm 128 --bk 256 --bn 128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("MXU utilisation"));
  EXPECT_THAT(r.out, HasSubstr("roofline bound"));
  EXPECT_THAT(r.out, HasSubstr("matches the reference on all 4 chips"));
  const auto j = LastLineJson(r.out);
  EXPECT_EQ(j["kernel"], "matmul");
  EXPECT_EQ(j["correct"], true);
  EXPECT_EQ(j["blocks"], (std::vector<int64_t>{128, 256, 128}));
  EXPECT_DOUBLE_EQ(j["flops"].get<double>(), 2.0 * 256 * 512 * 384);
  for (const char* key : {"achieved_flops_per_s", "peak_flops_per_s", "percent_of_peak",
                          "mxu_utilisation", "hbm_bytes", "roofline_ns", "percent_of_bound"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_GT(j[key].get<double>(), 0) << key;
  }
  EXPECT_LE(j["mxu_utilisation"].get<double>(), 1.0);
}

TEST(MatmulCli, ABadBlockIsAUsageErrorNamingTheRule) {
  const auto r =
      testing::RunTpusim("run matmul --topology v5e-2x2 --m 256 --k 256 --n 256 --bn 200");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("BlockSpec for input 1 ('b') has block (256, 200), but the last "
                               "two dims must be multiples of (8, 128)"));
}

}  // namespace
}  // namespace tpusim
