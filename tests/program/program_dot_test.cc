// A program's dot (dsl/program/array_ops.cc) shares the kernel dot's MXU numerics
// (dsl/mxu_numerics.h) and XLA's op as the compute model times it: precision and dtype change
// both its result and its time, as issue 15 asks of "the program-level dot".

#include <gtest/gtest.h>

#include <cmath>

#include "base/work.h"
#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

struct DotRun {
  Array out;
  double seconds = 0;  // MXU time of the one dot on chip 0
};

DotRun ProgramDot(const Array& a, const Array& b, std::optional<DType> out, Precision precision,
                  bool functional = true) {
  const Mesh mesh(testing::MakeTopology({1}, {false}));
  auto program =
      shard_map(mesh, {P{}, P{}}, {P{}},
                [=](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
                  return {ctx.dot(in[0], in[1], out, precision)};
                });
  RunOptions options;
  options.functional = functional;
  auto run = testing::RunAndCheckTrace(program, {a, b}, options);
  EXPECT_TRUE(run.result.ok) << run.result.error;
  DotRun r;
  if (functional && run.result.ok) r.out = run.result.outputs[0];
  r.seconds = static_cast<double>(run.result.stats.cores.at(0).mxu_busy) * 1e-12;
  return r;
}

// |got - a @ b| at worst, with a @ b in double; `round` first rounds the operands to bf16.
double MaxError(const Array& got, const Array& a, const Array& b, bool round) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  auto value = [round](const Array& x, int64_t i) {
    const double v = x.GetFlat(i);
    return round ? static_cast<double>(static_cast<float>(bf16(static_cast<float>(v)))) : v;
  };
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += value(a, i * k + p) * value(b, p * n + j);
      worst = std::max(worst, std::abs(got.GetFlat(i * n + j) - sum));
    }
  }
  return worst;
}

TEST(ProgramDot, F32NumericsFollowThePrecision) {
  const Array a = Array::Random({32, 256}, DType::kF32, 21);
  const Array b = Array::Random({256, 64}, DType::kF32, 22);
  const Array one_pass = ProgramDot(a, b, {}, Precision::kDefault).out;
  const Array six_pass = ProgramDot(a, b, {}, Precision::kHighest).out;
  // DEFAULT is one bf16 pass: off the f32 reference by bf16 rounding of the operands...
  EXPECT_GT(MaxError(one_pass, a, b, false), 1e-3);
  // ... and exactly the f32-accumulated product of the rounded operands.
  EXPECT_LT(MaxError(one_pass, a, b, true), 1e-4);
  // HIGHEST (bf16x6) is as good as f32 here.
  EXPECT_LT(MaxError(six_pass, a, b, false), 2e-5);
}

TEST(ProgramDot, Int32DotsAreExact) {
  Array a({8, 64}, DType::kInt32), b({64, 8}, DType::kInt32);
  for (int64_t i = 0; i < a.size(); ++i)
    a.SetFlat(i, (i * 7919) % 20001 - 10000);
  for (int64_t i = 0; i < b.size(); ++i)
    b.SetFlat(i, (i * 104729) % 30001 - 15000);
  // Sums of 64 products of up to 1.5e8 reach ~1e10: past f32's 24-bit mantissa, and past
  // int32, where the MXU wraps.
  const Array got = ProgramDot(a, b, {}, Precision::kDefault).out;
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      int64_t sum = 0;
      for (int64_t p = 0; p < 64; ++p)
        sum += static_cast<int64_t>(a.GetFlat(i * 64 + p)) *
               static_cast<int64_t>(b.GetFlat(p * 8 + j));
      ASSERT_EQ(got.GetFlat(i * 8 + j), static_cast<int32_t>(static_cast<uint32_t>(sum)))
          << "element (" << i << ", " << j << ")";
    }
  }
}

// The time is XLA's op on this chip (sim/compute_models.h), so precision and dtype scale it as
// the MXU passes do, and an int32 dot pays the calibrated int32 rate.
TEST(ProgramDot, TimeIsTheXlaFusedOpAtThePassesOfItsPrecision) {
  const int64_t m = 1024, k = 2048, n = 2048;
  const auto chip = testing::MakeTopology({1}, {false}).chip();
  auto expected = [&](DType dtype, Precision precision) {
    const double flops = 2.0 * m * k * n;
    const double element = SizeOf(dtype);
    // The MXU's part of the op (its launch and pipeline fill are the core's).
    return static_cast<double>(testing::ModelCycles(
               chip, testing::XlaDotWork(flops, MxuInputOf(dtype), precision,
                                         element * (m * k + k * n), element * m * n))) /
           chip.clock_hz();
  };
  for (const auto& [dtype, precision] :
       {std::pair{DType::kBF16, Precision::kDefault}, std::pair{DType::kF32, Precision::kDefault},
        std::pair{DType::kF32, Precision::kHigh}, std::pair{DType::kF32, Precision::kHighest},
        std::pair{DType::kInt32, Precision::kDefault}}) {
    const double got =
        ProgramDot(Array::Placeholder({m, k}, dtype), Array::Placeholder({k, n}, dtype), {},
                   precision, /*functional=*/false)
            .seconds;
    // Charged in whole cycles: up to one cycle (~1 ns) over the exact time.
    const double cycle = 1.0 / chip.clock_hz();
    EXPECT_NEAR(got, expected(dtype, precision), cycle)
        << DTypeName(dtype) << " " << PrecisionName(precision);
  }
  const double bf16 = expected(DType::kBF16, Precision::kDefault);
  EXPECT_GT(expected(DType::kF32, Precision::kHighest), 5 * bf16);
  EXPECT_GT(expected(DType::kInt32, Precision::kDefault), 5 * bf16);
}

}  // namespace
}  // namespace tpusim
