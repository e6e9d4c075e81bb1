// input_output_aliases and CompilerParams.collective_id, as Pallas has them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

// out = x + x, block by block.
PallasCall Double(InputOutputAliases aliases) {
  GridSpec grid;
  grid.grid = {4};
  grid.in_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  grid.out_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  return pallas_call(
      "double", [](Kernel& k, const Refs& r) { k.add(r[1], r[0], r[0]); }, grid,
      {{{32, 128}, DType::kF32}}, {}, std::move(aliases));
}

TEST(InputOutputAliases, TheOutputIsTheInputsBufferSoPeakHbmHoldsOneArray) {
  const Array x = Array::Random({32, 128}, DType::kF32, 1);
  Array expected({32, 128}, DType::kF32);
  for (int64_t e = 0; e < x.size(); ++e)
    expected.SetFlat(e, 2 * x.GetFlat(e));
  const auto fresh =
      testing::RunAndCheckTrace(shard_map(testing::OneChipMesh(), {P{}}, {P{}}, Double({})), {x});
  const auto aliased = testing::RunAndCheckTrace(
      shard_map(testing::OneChipMesh(), {P{}}, {P{}}, Double({{0, 0}})), {x});
  ASSERT_TRUE(fresh.result.ok && aliased.result.ok) << aliased.result.error;
  EXPECT_TRUE(CompareExact(aliased.result.outputs[0], expected).equal);
  EXPECT_EQ(fresh.result.peak_hbm_bytes[0], 2 * x.nbytes());
  EXPECT_EQ(aliased.result.peak_hbm_bytes[0], x.nbytes());
}

TEST(InputOutputAliases, AProgramChainsInPlaceCallsOnOneBuffer) {
  const Array x = Array::Random({32, 128}, DType::kF32, 2);
  auto program = shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                           [](ProgramContext& ctx, const std::vector<Value>& in) {
                             Value v = ctx.pallas_call(Double({{0, 0}}), {in[0]})[0];
                             return ctx.pallas_call(Double({{0, 0}}), {v});
                           });
  const auto run = testing::RunAndCheckTrace(program, {x}).result;
  ASSERT_TRUE(run.ok) << run.error;
  Array expected({32, 128}, DType::kF32);
  for (int64_t e = 0; e < x.size(); ++e)
    expected.SetFlat(e, 4 * x.GetFlat(e));
  EXPECT_TRUE(CompareExact(run.outputs[0], expected).equal);
  EXPECT_EQ(run.peak_hbm_bytes[0], x.nbytes());
}

// Two calls in flight on one chip: the first waits on its barrier semaphore, the second
// signals its own. With one collective_id they share the semaphore and the wait ends;
// with two they have one each, and the waiter never wakes.
ShardMap WaiterAndSignaller(int waiter_id, int signaller_id) {
  GridSpec grid;
  auto call = [&](const std::string& name, KernelFn body, int id) {
    return pallas_call(name, std::move(body), grid, {{{8}, DType::kF32}},
                       CompilerParams{.collective_id = id});
  };
  const PallasCall waiter = call(
      "waiter", [](Kernel& k, const Refs&) { k.wait(k.barrier_semaphore(), 1); }, waiter_id);
  const PallasCall signaller = call(
      "signaller", [](Kernel& k, const Refs&) { k.signal(k.barrier_semaphore(), 1); },
      signaller_id);
  return shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                   [waiter, signaller](ProgramContext& ctx, const std::vector<Value>& in) {
                     AsyncValues waiting = ctx.pallas_call_start(waiter, {in[0]});
                     ctx.pallas_call(signaller, {in[0]});
                     return ctx.pallas_call_done(waiting);
                   });
}

TEST(CollectiveId, ConcurrentCallsWithOneIdShareTheBarrierSemaphore) {
  const auto run =
      testing::RunAndCheckTrace(WaiterAndSignaller(3, 3), {Array({8}, DType::kF32)}).result;
  EXPECT_TRUE(run.ok) << run.error;
}

TEST(CollectiveId, DifferentIdsGetSeparateBarrierSemaphores) {
  const auto run =
      testing::RunAndCheckTrace(WaiterAndSignaller(3, 4), {Array({8}, DType::kF32)}).result;
  ASSERT_FALSE(run.ok);
  EXPECT_THAT(run.error, ::testing::HasSubstr("barrier_semaphore (collective_id 3)"));
}

// A slow chip enters the all_gather long after its peer, whose start barrier signals it
// first: the barrier semaphore belongs to the collective_id, so it is already there.
TEST(CollectiveId, APeerMaySignalTheBarrierBeforeTheChipEntersTheCall) {
  const Mesh mesh(testing::MakeTopology({2}, {true}));
  auto program =
      shard_map(mesh, {P{"x"}}, {P{}}, [](ProgramContext& ctx, const std::vector<Value>& in) {
        return std::vector<Value>{ctx.all_gather(ctx.dot(in[0], in[0]), "x", 0, true)};
      });
  RunOptions options;
  options.chip_slowdown = {1.0, 50.0};
  const auto run = program.Run({Array::Random({256, 128}, DType::kF32, 3)}, options);
  ASSERT_TRUE(run.ok) << run.error;
}

}  // namespace
}  // namespace tpusim
