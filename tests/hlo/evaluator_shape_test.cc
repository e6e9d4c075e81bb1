// The reference evaluator's data movement against results worked out by hand: broadcast,
// transpose, reshape and bitcast (with layouts), slices, pad, concatenate, reverse, iota,
// dynamic slices (clamped), gather and scatter.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/evaluator_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::ElementsAre;
using testing::EvaluateOne;
using testing::ModuleText;
using testing::Values;

TEST(ReferenceShapeOps, BroadcastTransposeReshapeAndBitcast) {
  const auto out = EvaluateOne(ModuleText(R"(
  %v = s32[3] constant({1, 2, 3})
  %rows = s32[2,3] broadcast(%v), dimensions={1}
  %cols = s32[3,2] broadcast(%v), dimensions={0}
  %scalar = s32[] constant(7)
  %filled = s32[2] broadcast(%scalar), dimensions={}
  %iota = s32[2,3]{1,0} iota(), iota_dimension=1
  %iota.0 = s32[2,3] iota(), iota_dimension=0
  %m = s32[2,3]{1,0} add(%iota, %iota.0)
  %t = s32[3,2] transpose(%m), dimensions={1,0}
  %r = s32[3,2] reshape(%m)
  %b = s32[3,2]{0,1} bitcast(%m)
  ROOT %out = (s32[2,3], s32[3,2], s32[2], s32[2,3], s32[3,2], s32[3,2], s32[3,2]) tuple(%rows, %cols, %filled, %m, %t, %r, %b))"));
  ASSERT_EQ(out.size(), 7u);
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 3, 1, 2, 3));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 1, 2, 2, 3, 3));
  EXPECT_THAT(Values(out[2]), ElementsAre(7, 7));
  // m = {{0,1,2},{1,2,3}}.
  EXPECT_THAT(Values(out[3]), ElementsAre(0, 1, 2, 1, 2, 3));
  EXPECT_THAT(Values(out[4]), ElementsAre(0, 1, 1, 2, 2, 3));
  EXPECT_THAT(Values(out[5]), ElementsAre(0, 1, 2, 1, 2, 3));
  // The same bytes read column-major as [3,2]: the transpose.
  EXPECT_THAT(Values(out[6]), ElementsAre(0, 1, 1, 2, 2, 3));
}

TEST(ReferenceShapeOps, SlicePadConcatenateReverse) {
  const auto out = EvaluateOne(ModuleText(R"(
  %m = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  %slice = s32[2,2] slice(%m), slice={[0:2], [1:3]}
  %v = s32[6] iota(), iota_dimension=0
  %strided = s32[3] slice(%v), slice={[1:6:2]}
  %two = s32[2] constant({1, 2})
  %zero = s32[] constant(0)
  %padded = s32[6] pad(%two, %zero), padding=1_2_1
  %three = s32[3] constant({1, 2, 3})
  %cropped = s32[2] pad(%three, %zero), padding=-1_0
  %pad2d = s32[3,4] pad(%m, %zero), padding=1_0x0_1
  %cat = s32[2,5] concatenate(%m, %slice), dimensions={1}
  %rev = s32[2,3] reverse(%m), dimensions={1}
  %rev.both = s32[2,3] reverse(%m), dimensions={0,1}
  ROOT %out = (s32[2,2], s32[3], s32[6], s32[2], s32[3,4], s32[2,5], s32[2,3], s32[2,3]) tuple(%slice, %strided, %padded, %cropped, %pad2d, %cat, %rev, %rev.both))"));
  ASSERT_EQ(out.size(), 8u);
  EXPECT_THAT(Values(out[0]), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 3, 5));
  EXPECT_THAT(Values(out[2]), ElementsAre(0, 1, 0, 2, 0, 0));
  EXPECT_THAT(Values(out[3]), ElementsAre(2, 3));
  EXPECT_THAT(Values(out[4]), ElementsAre(0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0));
  EXPECT_THAT(Values(out[5]), ElementsAre(1, 2, 3, 2, 3, 4, 5, 6, 5, 6));
  EXPECT_THAT(Values(out[6]), ElementsAre(3, 2, 1, 6, 5, 4));
  EXPECT_THAT(Values(out[7]), ElementsAre(6, 5, 4, 3, 2, 1));
}

TEST(ReferenceShapeOps, DynamicSlicesClampTheirStarts) {
  const auto out = EvaluateOne(ModuleText(R"(
  %v = s32[8] iota(), iota_dimension=0
  %six = s32[] constant(6)
  %minus = s32[] constant(-3)
  %ds = s32[4] dynamic-slice(%v, %six), dynamic_slice_sizes={4}
  %ds.low = s32[2] dynamic-slice(%v, %minus), dynamic_slice_sizes={2}
  %update = s32[3] constant({100, 101, 102})
  %dus = s32[8] dynamic-update-slice(%v, %update, %six)
  %m = s32[3,3] constant({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}})
  %one = s32[] constant(1)
  %block = s32[2,2] dynamic-slice(%m, %one, %six), dynamic_slice_sizes={2,2}
  ROOT %out = (s32[4], s32[2], s32[8], s32[2,2]) tuple(%ds, %ds.low, %dus, %block))"));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(Values(out[0]), ElementsAre(4, 5, 6, 7));  // start 6 clamped to 8 - 4
  EXPECT_THAT(Values(out[1]), ElementsAre(0, 1));
  EXPECT_THAT(Values(out[2]), ElementsAre(0, 1, 2, 3, 4, 100, 101, 102));  // start 6 -> 5
  EXPECT_THAT(Values(out[3]), ElementsAre(4, 5, 7, 8));
}

TEST(ReferenceShapeOps, GatherRowsWithClampedStarts) {
  const auto out = EvaluateOne(ModuleText(R"(
  %table = s32[4,2] constant({{0, 1}, {2, 3}, {4, 5}, {6, 7}})
  %indices = s32[3,1] constant({{3}, {1}, {9}})
  ROOT %gather = s32[3,2] gather(%table, %indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values(out[0]), ElementsAre(6, 7, 2, 3, 6, 7));  // 9 clamps to row 3
}

TEST(ReferenceShapeOps, GatherWindowsWithTheIndexVectorLast) {
  // 2-D starts (row, column) pick 2x2 windows of a 3x3 matrix; nothing collapsed.
  const auto out = EvaluateOne(ModuleText(R"(
  %m = s32[3,3] constant({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}})
  %starts = s32[2,2] constant({{0, 1}, {1, 0}})
  ROOT %gather = s32[2,2,2] gather(%m, %starts), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 2, 4, 5, 3, 4, 6, 7));
}

TEST(ReferenceShapeOps, ScatterAddsRepeatedIndicesAndSkipsWindowsOutside) {
  const auto out = EvaluateOne(ModuleText(R"(
  %table = f32[4,2] constant({{0, 1}, {2, 3}, {4, 5}, {6, 7}})
  %indices = s32[3] constant({1, 1, 4})
  %updates = f32[3,2] constant({{10, 20}, {100, 200}, {1000, 2000}})
  ROOT %scatter = f32[4,2] scatter(%table, %indices, %updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add)",
                                          1, 1, testing::kAddF32));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values(out[0]), ElementsAre(0, 1, 112, 223, 4, 5, 6, 7));
}

TEST(ReferenceShapeOps, ScatterWithAReplacingComputation) {
  const std::string keep_update =
      "%replace (old: s32[], new: s32[]) -> s32[] {\n"
      "  %old = s32[] parameter(0)\n"
      "  ROOT %new = s32[] parameter(1)\n"
      "}\n";
  const auto out = EvaluateOne(ModuleText(R"(
  %v = s32[5] constant({0, 0, 0, 0, 0})
  %indices = s32[2,1] constant({{3}, {0}})
  %updates = s32[2] constant({7, 9})
  ROOT %scatter = s32[5] scatter(%v, %indices, %updates), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%replace)",
                                          1, 1, keep_update));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values(out[0]), ElementsAre(9, 0, 0, 7, 0));
}

}  // namespace
}  // namespace tpusim::hlo::reference
