// The compute model (sim/compute_models.h) as a kernel sees it: the per-grid-step cost on the trace
// and in the time, the pipeline's exposed prologue and epilogue, and dot numerics that
// follow the MXU passes of each precision and dtype (docs/references.md §1).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "base/work.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "traces/trace_sink.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// Runs `program` with a Chrome JSON trace and returns the trace's text.
std::string TraceOf(const ShardMap& program, const std::vector<Array>& inputs) {
  const std::string path = testing::TempPath("trace.json");
  auto sink = traces::OpenTraceFile(path);
  RunOptions options;
  options.trace = sink.get();
  const RunResult result = program.Run(inputs, options);
  sink->Finish();
  sink.reset();
  EXPECT_TRUE(result.ok) << result.error;
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

TEST(GridStepCost, ShowsInsideEveryStepOfAPipelinedGrid) {
  GridSpec grid;
  grid.grid = {3};
  grid.in_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  grid.out_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  auto body = [](Kernel& k, const Refs& r) { k.cast(r[1], r[0]); };
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                                     pallas_call("steps", body, grid, {{{24, 128}, DType::kF32}}));
  const std::string text = TraceOf(program, {Array({24, 128}, DType::kF32)});
  EXPECT_THAT(text, HasSubstr("step (2,)"));
  // One slice per step (a JSON slice names itself once or, begin and end, twice).
  const int slices = Count(text, "\"step overhead\"");
  EXPECT_TRUE(slices == 3 || slices == 6) << slices;
}

// A grid whose operands are all ANY pipelines nothing: each step pays its loop control
// alone, so an empty body of N steps takes N times that cost, and no grid step is free.
ShardMap EmptyAnyGrid(int steps) {
  GridSpec grid;
  grid.grid = {steps};
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  return shard_map(
      testing::OneChipMesh(), {P{}}, {P{}},
      pallas_call("own dmas", [](Kernel&, const Refs&) {}, grid, {{{8}, DType::kF32}}));
}

TEST(GridStepCost, AGridThatPipelinesNothingPaysItsLoopControlPerStep) {
  const std::string text = TraceOf(EmptyAnyGrid(3), {Array({8}, DType::kF32)});
  EXPECT_THAT(text, HasSubstr("step (2,)"));
  EXPECT_EQ(Count(text, "step overhead"), 0);
  const int slices = Count(text, "\"loop control\"");
  EXPECT_TRUE(slices == 3 || slices == 6) << slices;
}

TEST(GridStepCost, AnEmptyGridOfNStepsTakesNTimesTheLoopCost) {
  const Mesh mesh = testing::OneChipMesh();
  const auto& chip = mesh.topology().chip();
  const uint64_t cycles = testing::ModelCycles(chip, base::GridStep{false});
  ASSERT_GT(cycles, 0u);
  // Less than a pipelined step: no index maps, DMAs or waits.
  EXPECT_LT(cycles, testing::ModelCycles(chip, base::GridStep{}));
  const double step_ps = static_cast<double>(cycles) / chip.clock_hz() * 1e12;
  base::Picoseconds times[2];
  for (int i = 0; i < 2; ++i) {
    const RunResult result =
        EmptyAnyGrid(1000 * (i + 1)).Run({Array({8}, DType::kF32)}, RunOptions{});
    ASSERT_TRUE(result.ok) << result.error;
    times[i] = result.time();
  }
  // The same launch and the same first step; 1000 more steps, each rounded to a picosecond.
  EXPECT_NEAR(static_cast<double>(times[1] - times[0]), 1000 * step_ps, 1000);
  EXPECT_GE(static_cast<double>(times[0]), 1000 * step_ps - 1000);
}

// emit_pipeline's inner steps pay the step cost as a grid's do: the outer grid below moves
// no blocks (no charge), its nested pipeline runs 4 steps (one charge each).
TEST(GridStepCost, EachStepOfANestedPipelineIsCharged) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  auto body = [](Kernel& k, const Refs& r) {
    const BlockSpec spec({8, 128}, [](int i) { return BlockIndex{i, 0}; });
    emit_pipeline(k, [&](const std::vector<int>&, const Refs& b) { k.cast(b[1], b[0]); }, {4},
                  {spec}, {spec}, {r[0]}, {r[1]});
  };
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                                     pallas_call("nested", body, grid, {{{32, 128}, DType::kF32}}));
  const std::string text = TraceOf(program, {Array({32, 128}, DType::kF32)});
  const int slices = Count(text, "\"step overhead\"");
  EXPECT_TRUE(slices == 4 || slices == 8) << slices;
}

// As in Pallas, the first block's copy-in and the last block's write-back are exposed;
// every other copy hides behind a compute-bound step. Time = copy-in + steps x (step cost
// + compute) + write-back, each copy 512 KiB over the HBM port.
TEST(GridStepCost, PrologueAndEpilogueCopiesAreExposed) {
  constexpr int kSteps = 4;
  GridSpec grid;
  grid.grid = {kSteps};
  grid.in_specs = {BlockSpec({512, 512}, [](int i) { return BlockIndex{i, 0}; })};
  grid.out_specs = {BlockSpec({512, 512}, [](int i) { return BlockIndex{i, 0}; })};
  grid.scratch_shapes = {ScratchSpec::VMEM({512, 512}, DType::kF32, "acc")};
  auto body = [](Kernel& k, const Refs& r) {
    k.dot(r[0], r[0], r[2], false);
    k.cast(r[1], r[2]);
  };
  const Mesh mesh = testing::OneChipMesh();
  const ShardMap program = shard_map(
      mesh, {P{}}, {P{}}, pallas_call("chain", body, grid, {{{512 * kSteps, 512}, DType::kBF16}}));
  RunOptions options;
  options.functional = false;
  auto run = testing::RunAndCheckTrace(
      program, {Array::Placeholder({512 * kSteps, 512}, DType::kBF16)}, options);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto& chip = mesh.topology().chip();
  const auto& core = run.result.stats.cores[0];
  const double compute = static_cast<double>(core.mxu_busy + core.vpu_busy);
  const double steps = kSteps * static_cast<double>(testing::ModelCycles(chip, base::GridStep{})) /
                       chip.clock_hz() * 1e12;
  const double copy = 512.0 * 512 * 2 / chip.hbm().bandwidth_bytes_per_s() * 1e12;  // ps
  const double time = static_cast<double>(run.result.time());
  // Tolerance: a fifth of one copy, so either copy hidden (or a third exposed) fails.
  EXPECT_NEAR(time, compute + steps + 2 * copy, 0.2 * copy)
      << "compute " << compute << " ps, steps " << steps << " ps, copy " << copy << " ps";
}

// --- dot numerics -----------------------------------------------------------------------

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Matrix ToDouble(const Array& a, bool round_to_bf16 = false) {
  Matrix m(a.shape()[0], a.shape()[1]);
  for (int64_t i = 0; i < a.size(); ++i) {
    const double v = a.GetFlat(i);
    m.data()[i] = round_to_bf16 ? static_cast<float>(bf16(static_cast<float>(v))) : v;
  }
  return m;
}

// acc = a @ b on one chip, whole operands in VMEM.
Array Dot(const Array& a, const Array& b, DType acc, Precision precision) {
  GridSpec grid;
  grid.in_specs = {BlockSpec(), BlockSpec()};
  grid.out_specs = {BlockSpec()};
  auto body = [precision, acc](Kernel& k, const Refs& r) {
    k.dot(r[0], r[1], r[2], false, precision, acc);
  };
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}},
                pallas_call("dot", body, grid, {{{a.shape()[0], b.shape()[1]}, acc}}));
  auto run = testing::RunAndCheckTrace(program, {a, b});
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return run.result.ok ? run.result.outputs[0] : Array({a.shape()[0], b.shape()[1]}, acc);
}

double MaxError(const Array& got, const Matrix& want) {
  double worst = 0;
  for (int64_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got.GetFlat(i) - want.data()[i]));
  return worst;
}

TEST(DotPrecision, F32PassesFollowTheMxu) {
  const Array a = Array::Random({64, 256}, DType::kF32, 11);
  const Array b = Array::Random({256, 128}, DType::kF32, 12);
  const Matrix exact = ToDouble(a) * ToDouble(b);
  const double one_pass = MaxError(Dot(a, b, DType::kF32, Precision::kDefault), exact);
  const double three = MaxError(Dot(a, b, DType::kF32, Precision::kHigh), exact);
  const double six = MaxError(Dot(a, b, DType::kF32, Precision::kHighest), exact);
  // DEFAULT is one bf16 pass: it differs from the f32 reference by bf16 rounding of the
  // operands (2^-8 relative), far more than f32 arithmetic would (~1e-6 here)...
  EXPECT_GT(one_pass, 1e-3);
  // ... and it is exactly the product of the bf16-rounded operands, accumulated in f32.
  const Matrix rounded = ToDouble(a, true) * ToDouble(b, true);
  EXPECT_LT(MaxError(Dot(a, b, DType::kF32, Precision::kDefault), rounded), 1e-4);
  // bf16x3 and bf16x6 approximate f32: each more accurate than the last.
  EXPECT_LT(three, one_pass / 20);
  EXPECT_LT(six, 2e-5);
  EXPECT_LE(six, three);
}

TEST(DotPrecision, IntegerDotsAccumulateExactlyAndWrapAsInt32) {
  Array a({8, 128}, DType::kInt32), b({128, 128}, DType::kInt32);
  for (int64_t i = 0; i < a.size(); ++i)
    a.SetFlat(i, static_cast<double>((i * 7919) % 2000001) - 1000000);
  for (int64_t i = 0; i < b.size(); ++i)
    b.SetFlat(i, static_cast<double>((i * 104729) % 2000001) - 1000000);
  const Array got = Dot(a, b, DType::kInt32, Precision::kDefault);
  ASSERT_EQ(got.dtype(), DType::kInt32);
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t c = 0; c < 128; ++c) {
      uint64_t sum = 0;  // exact modulo 2^64, so its low 32 bits are int32's result
      for (int64_t j = 0; j < 128; ++j) {
        sum += static_cast<uint64_t>(static_cast<int64_t>(a.GetFlat(r * 128 + j))) *
               static_cast<uint64_t>(static_cast<int64_t>(b.GetFlat(j * 128 + c)));
      }
      ASSERT_EQ(static_cast<int64_t>(got.GetFlat(r * 128 + c)),
                static_cast<int32_t>(static_cast<uint32_t>(sum)))
          << "at (" << r << ", " << c << ")";
    }
  }
  const Array x = Array::Random({8, 128}, DType::kInt8, 5);
  const Array y = Array::Random({128, 128}, DType::kInt8, 6);
  const Matrix exact = ToDouble(x) * ToDouble(y);
  EXPECT_EQ(MaxError(Dot(x, y, DType::kInt32, Precision::kDefault), exact), 0);
}

TEST(DotPrecision, MixedFloatAndIntegerOperandsAreRefused) {
  GridSpec grid;
  grid.in_specs = {BlockSpec(), BlockSpec()};
  grid.out_specs = {BlockSpec()};
  auto body = [](Kernel& k, const Refs& r) { k.dot(r[0], r[1], r[2], false); };
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}},
                                     pallas_call("mixed", body, grid, {{{8, 128}, DType::kF32}}));
  auto run = testing::RunAndCheckTrace(
      program, {Array({8, 128}, DType::kInt8), Array({128, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error, HasSubstr("is int8 and"));
  EXPECT_THAT(run.result.error, HasSubstr("cast one of them first"));
}

TEST(DotPrecision, APreferredTypeOtherThanTheAccumulatorsIsRefused) {
  GridSpec grid;
  grid.in_specs = {BlockSpec(), BlockSpec()};
  grid.out_specs = {BlockSpec()};
  auto body = [](Kernel& k, const Refs& r) {
    k.dot(r[0], r[1], r[2], false, Precision::kDefault, DType::kBF16);
  };
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}},
                                     pallas_call("pref", body, grid, {{{8, 128}, DType::kF32}}));
  auto run = testing::RunAndCheckTrace(
      program, {Array({8, 128}, DType::kBF16), Array({128, 128}, DType::kBF16)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error, HasSubstr("preferred_element_type bf16"));
}

}  // namespace
}  // namespace tpusim
