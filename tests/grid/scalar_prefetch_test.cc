// PrefetchScalarGridSpec: the first num_scalar_prefetch inputs land in SMEM, the kernel
// gets their refs first, and index maps read their values to pick blocks (a gather).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

// out block i = x block idx[i] + idx[i], for x f32[8 * 4, 128] and idx int32[4].
PallasCall GatherCall() {
  GridSpec grid;
  grid.grid = {4};
  grid.in_specs = {BlockSpec({8, 128}, [](const std::vector<int>& g, const std::vector<Array>& s) {
    return BlockIndex{static_cast<int64_t>(s[0].GetFlat(g[0])), 0};
  })};
  grid.out_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  grid.scratch_shapes = {ScratchSpec::VMEM({8, 128}, DType::kF32, "offset")};
  KernelFn kernel = [](Kernel& k, const Refs& r) {
    const Ref &idx = r[0], &x = r[1], &out = r[2], &offset = r[3];
    EXPECT_EQ(idx.memory_space(), MemorySpace::kSmem);
    double value = 0;
    if (k.port().functional()) value = k.load(idx.at(ds(k.program_id(0), 1))).GetFlat(0);
    k.fill(offset, value);
    k.add(out, x, offset);
  };
  return pallas_call("gather", kernel, PrefetchScalarGridSpec(1, grid), {{{32, 128}, DType::kF32}});
}

ShardMap Gather() {
  return shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}}, GatherCall());
}

// The same call inside a program, after an op on x, so the call is not the first step.
ShardMap GatherProgram() {
  return shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}},
                   [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
                     const Value doubled = ctx.add(in[1], in[1]);
                     return ctx.pallas_call(GatherCall(), {in[0], doubled});
                   });
}

Array Indices(std::vector<int> values) {
  Array idx({4}, DType::kInt32);
  for (int i = 0; i < 4; ++i)
    idx.SetFlat(i, values[i]);
  return idx;
}

Array Expected(const Array& x, const Array& idx) {
  Array expected({32, 128}, DType::kF32);
  for (int i = 0; i < 4; ++i) {
    const auto b = static_cast<int64_t>(idx.GetFlat(i));
    for (int64_t e = 0; e < 8 * 128; ++e)
      expected.SetFlat(i * 8 * 128 + e, x.GetFlat(b * 8 * 128 + e) + static_cast<double>(b));
  }
  return expected;
}

TEST(ScalarPrefetch, IndexMapsReadTheScalarOperandsAndTheKernelGetsThemInSmem) {
  const Array x = Array::Random({32, 128}, DType::kF32, 3);
  const Array idx = Indices({2, 0, 3, 2});
  const auto run = testing::RunAndCheckTrace(Gather(), {idx, x}).result;
  ASSERT_TRUE(run.ok) << run.error;
  const auto check = CompareExact(run.outputs[0], Expected(x, idx));
  EXPECT_TRUE(check.equal) << check.detail;
}

TEST(ScalarPrefetch, AProgramPassesScalarOperandsToItsPallasCall) {
  const Array x = Array::Random({32, 128}, DType::kF32, 5);
  const Array idx = Indices({3, 1, 1, 0});
  const auto run = testing::RunAndCheckTrace(GatherProgram(), {idx, x}).result;
  ASSERT_TRUE(run.ok) << run.error;
  Array doubled({32, 128}, DType::kF32);
  for (int64_t e = 0; e < doubled.size(); ++e)
    doubled.SetFlat(e, 2 * x.GetFlat(e));
  const auto check = CompareExact(run.outputs[0], Expected(doubled, idx));
  EXPECT_TRUE(check.equal) << check.detail;
}

// Steps that map to the block already held skip the copy, so repeated indices need fewer
// copy-ins; and timing-only runs (scalars still real) time exactly as functional ones.
TEST(ScalarPrefetch, RepeatedIndicesSkipCopiesAndTimingOnlyRunsAgree) {
  const Array x = Array::Random({32, 128}, DType::kF32, 3);
  RunOptions timing;
  timing.functional = false;
  const ShardMap program = Gather();
  const auto distinct = program.Run({Indices({0, 1, 2, 3}), x}, {});
  const auto repeated = program.Run({Indices({1, 1, 1, 1}), x}, {});
  const auto repeated_timing =
      program.Run({Indices({1, 1, 1, 1}), Array::Placeholder({32, 128}, DType::kF32)}, timing);
  ASSERT_TRUE(distinct.ok && repeated.ok && repeated_timing.ok);
  // Four blocks in, four out, and the scalars' own copy; repeats skip three copy-ins.
  EXPECT_EQ(distinct.stats.dmas, 9u);
  EXPECT_EQ(repeated.stats.dmas, 6u);
  EXPECT_LE(repeated.time(), distinct.time());
  EXPECT_EQ(repeated_timing.time(), repeated.time());
}

// The data-dependent index map picks the same blocks with or without payload, in a
// program too: the timing-only run reads the scalars the host passed in.
TEST(ScalarPrefetch, ATimingOnlyProgramTakesTheFunctionalRunsTime) {
  const Array x = Array::Random({32, 128}, DType::kF32, 7);
  RunOptions timing;
  timing.functional = false;
  for (const auto& values : {std::vector<int>{0, 1, 2, 3}, std::vector<int>{2, 2, 0, 0}}) {
    const auto functional = GatherProgram().Run({Indices(values), x}, {});
    const auto timing_only =
        GatherProgram().Run({Indices(values), Array::Placeholder({32, 128}, DType::kF32)}, timing);
    ASSERT_TRUE(functional.ok) << functional.error;
    ASSERT_TRUE(timing_only.ok) << timing_only.error;
    EXPECT_EQ(timing_only.time(), functional.time());
  }
}

}  // namespace
}  // namespace tpusim
