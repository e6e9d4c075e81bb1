// Interpret-mode parity (docs/references.md §5): memory nobody wrote reads as NaN (integers:
// the dtype's max) unless the run asks for zeros, and --grid-seed shuffles the grid
// points of 'parallel' dimensions, so a kernel that relies on either gives visibly
// wrong data instead of passing by accident.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "traces/trace_checker.h"

namespace tpusim {
namespace {

using namespace dsl;

// A one-chip call with no inputs but `x` (f32[8, 128], ANY), the given output and scratch.
RunResult RunOneChip(KernelFn body, ShapeDtype out, std::vector<ScratchSpec> scratch,
                     const RunOptions& options = {}) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = std::move(scratch);
  PallasCall call = pallas_call("uninitialized", std::move(body), grid, {out});
  call.in_names = {"x"};
  call.out_names = {"out"};
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  return testing::RunAndCheckTrace(program, {Array::Random({8, 128}, DType::kF32, 5)}, options,
                                   "uninitialized")
      .result;
}

int64_t CountNan(const Array& a) {
  int64_t n = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    n += std::isnan(a.GetFlat(i));
  return n;
}

TEST(UninitializedMemory, AnOutputNoOneWritesIsNanOrTheIntegerMax) {
  const KernelFn nothing = [](Kernel&, const Refs&) {};
  const RunResult f32 = RunOneChip(nothing, {{8, 128}, DType::kF32}, {});
  ASSERT_TRUE(f32.ok) << f32.error;
  EXPECT_EQ(CountNan(f32.outputs[0]), 8 * 128);
  const RunResult bf16 = RunOneChip(nothing, {{8, 128}, DType::kBF16}, {});
  ASSERT_TRUE(bf16.ok) << bf16.error;
  EXPECT_EQ(CountNan(bf16.outputs[0]), 8 * 128);
  const RunResult i32 = RunOneChip(nothing, {{8, 128}, DType::kInt32}, {});
  ASSERT_TRUE(i32.ok) << i32.error;
  EXPECT_EQ(i32.outputs[0].GetFlat(77), std::numeric_limits<int32_t>::max());
  const RunResult i8 = RunOneChip(nothing, {{8, 128}, DType::kInt8}, {});
  ASSERT_TRUE(i8.ok) << i8.error;
  EXPECT_EQ(i8.outputs[0].GetFlat(3), 127);
}

TEST(UninitializedMemory, ZeroIsAnOption) {
  RunOptions options;
  options.uninitialized_memory = UninitializedMemory::kZero;
  const RunResult run =
      RunOneChip([](Kernel&, const Refs&) {}, {{8, 128}, DType::kF32}, {}, options);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(CountNan(run.outputs[0]), 0);
  EXPECT_EQ(run.outputs[0].GetFlat(100), 0);
}

// Adds x into an accumulator it never zeroed: right only if fresh VMEM happens to be 0.
const KernelFn kForgetsToZeroTheAccumulator = [](Kernel& k, const Refs& r) {
  const Ref &x = r[0], &out = r[1], &buf = r[2], &acc = r[3], &sem = r[4];
  AsyncCopy in = k.async_copy(x, buf, sem);
  in.start();
  in.wait();
  k.add(acc, acc, buf);
  AsyncCopy back = k.async_copy(acc, out, sem);
  back.start();
  back.wait();
};
const std::vector<ScratchSpec> kAccumulatorScratch = {
    ScratchSpec::VMEM({8, 128}, DType::kF32, "buf"),
    ScratchSpec::VMEM({8, 128}, DType::kF32, "acc"), ScratchSpec::DMA({}, "sem")};

TEST(UninitializedMemory, AKernelThatReadsUnwrittenVmemGetsNan) {
  const RunResult run =
      RunOneChip(kForgetsToZeroTheAccumulator, {{8, 128}, DType::kF32}, kAccumulatorScratch);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(CountNan(run.outputs[0]), 8 * 128);
  // With zeroed memory the bug would hide: the result equals x.
  RunOptions zero;
  zero.uninitialized_memory = UninitializedMemory::kZero;
  const RunResult hidden =
      RunOneChip(kForgetsToZeroTheAccumulator, {{8, 128}, DType::kF32}, kAccumulatorScratch, zero);
  ASSERT_TRUE(hidden.ok) << hidden.error;
  EXPECT_TRUE(CompareExact(hidden.outputs[0], Array::Random({8, 128}, DType::kF32, 5)).equal);
}

TEST(UninitializedMemory, UnwrittenSmemReadsAsTheIntegerMax) {
  const RunResult run = RunOneChip(
      [](Kernel& k, const Refs& r) {
        AsyncCopy copy = k.async_copy(r[2], r[1], r[3]);
        copy.start();
        copy.wait();
      },
      {{1, 128}, DType::kInt32},
      {ScratchSpec::SMEM({1, 128}, DType::kInt32, "counts"), ScratchSpec::DMA({}, "sem")});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.outputs[0].GetFlat(0), std::numeric_limits<int32_t>::max());
}

// ---------------------------------------------------------------------------------------
// Reads out of bounds (interpret mode's out_of_bounds_reads).

const std::vector<ScratchSpec> kTwoBuffers = {ScratchSpec::VMEM({8, 128}, DType::kF32, "buf"),
                                              ScratchSpec::VMEM({8, 128}, DType::kF32, "got"),
                                              ScratchSpec::DMA({}, "sem")};

// Copies x into buf, computes `read(buf)` into got, and got into out.
KernelFn ReadsThrough(std::function<void(Kernel&, const Ref& buf, const Ref& got)> read) {
  return [read](Kernel& k, const Refs& r) {
    const Ref &x = r[0], &out = r[1], &buf = r[2], &got = r[3], &sem = r[4];
    AsyncCopy in = k.async_copy(x, buf, sem);
    in.start();
    in.wait();
    read(k, buf, got);
    AsyncCopy back = k.async_copy(got, out, sem);
    back.start();
    back.wait();
  };
}

// A load of rows 4..11 of the 8-row buf: half of it past the end.
const KernelFn kLoadsPastTheEnd = ReadsThrough(
    [](Kernel& k, const Ref& buf, const Ref& got) { k.store(got, k.load(buf.at(ds(4, 8)))); });
// An add reading rows -4..3 of buf: half of it before the start.
const KernelFn kAddsFromBeforeTheStart = ReadsThrough(
    [](Kernel& k, const Ref& buf, const Ref& got) { k.add(got, buf.at(ds(-4, 8)), buf); });

RunOptions OutOfBoundsReads(UninitializedMemory memory = UninitializedMemory::kNan) {
  RunOptions options;
  options.out_of_bounds_reads = OutOfBoundsReads::kUninitialized;
  options.uninitialized_memory = memory;
  return options;
}

const Array kX = Array::Random({8, 128}, DType::kF32, 5);  // RunOneChip's input

TEST(OutOfBoundsReads, RaiseByDefault) {
  const RunResult run = RunOneChip(kLoadsPastTheEnd, {{8, 128}, DType::kF32}, kTwoBuffers);
  ASSERT_FALSE(run.ok);
  EXPECT_EQ(run.error_kind, ErrorKind::kOutOfBounds);
  EXPECT_THAT(run.error, ::testing::HasSubstr("'buf' is sliced out of bounds: dimension 0 has "
                                              "extent 8, but the slice covers [4, 12)"));
  const RunResult add = RunOneChip(kAddsFromBeforeTheStart, {{8, 128}, DType::kF32}, kTwoBuffers);
  ASSERT_FALSE(add.ok);
  EXPECT_THAT(add.error, ::testing::HasSubstr("the slice covers [-4, 4)"));
}

TEST(OutOfBoundsReads, UninitializedReadsNanOutsideAndTheDataInside) {
  const RunResult run =
      RunOneChip(kLoadsPastTheEnd, {{8, 128}, DType::kF32}, kTwoBuffers, OutOfBoundsReads());
  ASSERT_TRUE(run.ok) << run.error;
  const Array& out = run.outputs[0];
  EXPECT_TRUE(CompareExact(out.Slice({0, 0}, {4, 128}), kX.Slice({4, 0}, {4, 128})).equal);
  EXPECT_EQ(CountNan(out.Slice({4, 0}, {4, 128})), 4 * 128);
  // A compute op's read too, before the start: NaN + x there, x + x where it is inside.
  const RunResult add =
      RunOneChip(kAddsFromBeforeTheStart, {{8, 128}, DType::kF32}, kTwoBuffers, OutOfBoundsReads());
  ASSERT_TRUE(add.ok) << add.error;
  EXPECT_EQ(CountNan(add.outputs[0].Slice({0, 0}, {4, 128})), 4 * 128);
  EXPECT_FLOAT_EQ(add.outputs[0].GetFlat(4 * 128 + 7), kX.GetFlat(7) + kX.GetFlat(4 * 128 + 7));
}

TEST(OutOfBoundsReads, UninitializedFollowsZeroMemoryAndIntegerMax) {
  const RunResult zero = RunOneChip(kLoadsPastTheEnd, {{8, 128}, DType::kF32}, kTwoBuffers,
                                    OutOfBoundsReads(UninitializedMemory::kZero));
  ASSERT_TRUE(zero.ok) << zero.error;
  EXPECT_EQ(CountNan(zero.outputs[0]), 0);
  EXPECT_EQ(zero.outputs[0].GetFlat(4 * 128 + 9), 0);
  EXPECT_EQ(zero.outputs[0].GetFlat(9), kX.GetFlat(4 * 128 + 9));
  const RunResult ints = RunOneChip(
      [](Kernel& k, const Refs& r) {
        const Ref &out = r[1], &counts = r[2], &got = r[3], &sem = r[4];
        k.fill(counts, 5);
        k.store(got, k.load(counts.at(ds(4, 8))));
        AsyncCopy back = k.async_copy(got, out, sem);
        back.start();
        back.wait();
      },
      {{8, 128}, DType::kInt32},
      {ScratchSpec::VMEM({8, 128}, DType::kInt32, "counts"),
       ScratchSpec::VMEM({8, 128}, DType::kInt32, "got"), ScratchSpec::DMA({}, "sem")},
      OutOfBoundsReads());
  ASSERT_TRUE(ints.ok) << ints.error;
  EXPECT_EQ(ints.outputs[0].GetFlat(3 * 128), 5);
  EXPECT_EQ(ints.outputs[0].GetFlat(4 * 128), std::numeric_limits<int32_t>::max());
}

TEST(OutOfBoundsReads, StoresAndCopiesOutOfBoundsStillRaise) {
  const std::vector<std::function<void(Kernel&, const Ref&, const Ref&)>> writes = {
      [](Kernel& k, const Ref& buf, const Ref&) {
        k.store(buf.at(ds(4, 8)), Array({8, 128}, DType::kF32));
      },
      [](Kernel& k, const Ref& buf, const Ref&) { k.fill(buf.at(ds(4, 8)), 1); },
      [](Kernel& k, const Ref& buf, const Ref& got) {
        AsyncCopy copy = k.async_copy(buf.at(ds(4, 8)), got, k.ref("sem"));
        copy.start();
      }};
  for (const auto& write : writes) {
    const RunResult run =
        RunOneChip(ReadsThrough(write), {{8, 128}, DType::kF32}, kTwoBuffers, OutOfBoundsReads());
    ASSERT_FALSE(run.ok);
    EXPECT_EQ(run.error_kind, ErrorKind::kOutOfBounds);
    EXPECT_THAT(run.error, ::testing::HasSubstr("'buf' is sliced out of bounds"));
    EXPECT_THAT(run.error, ::testing::HasSubstr("Only a read may run past the shape"));
  }
}

// ---------------------------------------------------------------------------------------
// Grid order.

// Block i of the output should hold i. This kernel counts steps in a VMEM carry instead
// of using program_id: right only when the steps run in order 0, 1, 2, ...
const KernelFn kCountsSteps = [](Kernel& k, const Refs& r) {
  const Ref &out = r[1], &carry = r[2];
  if (k.program_id(0) == 0) {
    k.fill(carry, 0);
  } else {
    Array next = k.load(carry);
    for (int64_t i = 0; i < next.size(); ++i)
      next.SetFlat(i, next.GetFlat(i) + 1);
    k.store(carry, next);
  }
  k.store(out, k.load(carry));
};

// Block i of the output holds i + x, whatever the order.
const KernelFn kUsesProgramId = [](Kernel& k, const Refs& r) { k.fill(r[1], k.program_id(0)); };

constexpr int kSteps = 8;

ShardMap GridProgram(KernelFn body, const std::string& semantics) {
  GridSpec grid;
  grid.grid = {kSteps};
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  grid.scratch_shapes = {ScratchSpec::VMEM({8, 128}, DType::kF32, "carry")};
  PallasCall call =
      pallas_call("grid_order", std::move(body), grid, {{{8 * kSteps, 128}, DType::kF32}},
                  CompilerParams{.dimension_semantics = {semantics}});
  return shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
}

Array StepIndices() {
  Array expected({8 * kSteps, 128}, DType::kF32);
  for (int64_t i = 0; i < expected.size(); ++i)
    expected.SetFlat(i, static_cast<double>(i / (8 * 128)));
  return expected;
}

struct GridRun {
  RunResult result;
  std::string trace_bytes;
};

GridRun RunGrid(const ShardMap& program, std::optional<uint64_t> seed, const std::string& name) {
  RunOptions options;
  options.grid_seed = seed;
  auto run =
      testing::RunAndCheckTrace(program, {Array::Random({8, 128}, DType::kF32, 5)}, options, name);
  return {run.result, traces::ReadTraceFile(run.trace_path)};
}

TEST(GridOrder, AKernelThatDependsOnTheOrderOfParallelStepsFailsWithASeed) {
  const ShardMap program = GridProgram(kCountsSteps, "parallel");
  const GridRun in_order = RunGrid(program, std::nullopt, "grid_in_order");
  ASSERT_TRUE(in_order.result.ok) << in_order.result.error;
  EXPECT_TRUE(CompareExact(in_order.result.outputs[0], StepIndices()).equal);
  const GridRun shuffled = RunGrid(program, 1, "grid_shuffled");
  ASSERT_TRUE(shuffled.result.ok) << shuffled.result.error;
  const Comparison check = CompareExact(shuffled.result.outputs[0], StepIndices());
  EXPECT_FALSE(check.equal) << "the shuffled order went unnoticed";
}

TEST(GridOrder, ArbitraryDimensionsKeepTheirOrder) {
  const GridRun run = RunGrid(GridProgram(kCountsSteps, "arbitrary"), 1, "grid_arbitrary");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(CompareExact(run.result.outputs[0], StepIndices()).equal);
}

TEST(GridOrder, AKernelThatUsesProgramIdIsRightInAnyOrder) {
  const ShardMap program = GridProgram(kUsesProgramId, "parallel");
  for (uint64_t seed : {1, 2, 3}) {
    const GridRun run = RunGrid(program, seed, "grid_program_id");
    ASSERT_TRUE(run.result.ok) << run.result.error;
    EXPECT_TRUE(CompareExact(run.result.outputs[0], StepIndices()).equal) << seed;
  }
}

TEST(GridOrder, TheSameSeedGivesTheSameOrderAndTraceBytes) {
  const ShardMap program = GridProgram(kUsesProgramId, "parallel");
  const GridRun a = RunGrid(program, 7, "grid_seed_7a");
  const GridRun b = RunGrid(program, 7, "grid_seed_7b");
  const GridRun other = RunGrid(program, 8, "grid_seed_8");
  const GridRun in_order = RunGrid(program, std::nullopt, "grid_no_seed");
  EXPECT_EQ(a.trace_bytes, b.trace_bytes);
  EXPECT_NE(a.trace_bytes, other.trace_bytes);
  EXPECT_NE(a.trace_bytes, in_order.trace_bytes);
}

// emit_pipeline's inner grid follows the same seed on its 'parallel' dimensions. Returns
// the inner steps in the order they ran, after checking the result is still right.
std::vector<int> InnerOrder(const std::vector<std::string>& semantics,
                            std::optional<uint64_t> seed) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  std::vector<int> order;
  auto body = [&](Kernel& k, const Refs& r) {
    const BlockSpec spec({8, 128}, [](int i) { return BlockIndex{i, 0}; });
    emit_pipeline(
        k,
        [&](const std::vector<int>& ids, const Refs& blocks) {
          order.push_back(ids[0]);
          k.add(blocks[1], blocks[0], blocks[0]);
        },
        {kSteps}, {spec}, {spec}, {r[0]}, {r[1]}, semantics);
  };
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                pallas_call("inner_order", body, grid, {{{8 * kSteps, 128}, DType::kF32}}));
  const Array x = Array::Random({8 * kSteps, 128}, DType::kF32, 3);
  RunOptions options;
  options.grid_seed = seed;
  auto run = testing::RunAndCheckTrace(program, {x}, options, "inner_order");
  EXPECT_TRUE(run.result.ok) << run.result.error;
  Array doubled = x;
  for (int64_t i = 0; i < doubled.size(); ++i)
    doubled.SetFlat(i, 2 * x.GetFlat(i));
  if (run.result.ok) {
    EXPECT_TRUE(CompareExact(run.result.outputs[0], doubled).equal);
  }
  return order;
}

TEST(GridOrder, EmitPipelineShufflesItsParallelDimensionsWithTheSeed) {
  const std::vector<int> in_order = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(InnerOrder({"parallel"}, std::nullopt), in_order);
  EXPECT_EQ(InnerOrder({"arbitrary"}, 1), in_order);
  EXPECT_EQ(InnerOrder({}, 1), in_order);  // no semantics: all arbitrary
  const std::vector<int> shuffled = InnerOrder({"parallel"}, 1);
  EXPECT_NE(shuffled, in_order);
  EXPECT_TRUE(std::is_permutation(shuffled.begin(), shuffled.end(), in_order.begin()));
  EXPECT_EQ(InnerOrder({"parallel"}, 1), shuffled);  // the same seed, the same order
}

TEST(GridOrder, EmitPipelineNamesBadDimensionSemantics) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  for (const std::vector<std::string>& semantics :
       {std::vector<std::string>{"parallel", "parallel"}, std::vector<std::string>{"sequential"}}) {
    auto body = [&](Kernel& k, const Refs& r) {
      const BlockSpec spec({8, 128}, [](int i) { return BlockIndex{i, 0}; });
      emit_pipeline(
          k, [](const std::vector<int>&, const Refs&) {}, {kSteps}, {spec}, {spec}, {r[0]}, {r[1]},
          semantics);
    };
    const ShardMap program =
        shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                  pallas_call("bad_semantics", body, grid, {{{8 * kSteps, 128}, DType::kF32}}));
    auto run = testing::RunAndCheckTrace(
        program, {Array::Random({8 * kSteps, 128}, DType::kF32, 3)}, RunOptions{}, "bad_semantics");
    EXPECT_FALSE(run.result.ok);
    EXPECT_EQ(run.result.error_kind, ErrorKind::kKernelMisuse);
    EXPECT_THAT(run.result.error, ::testing::HasSubstr("dimension_semantics")) << run.result.error;
  }
}

}  // namespace
}  // namespace tpusim
