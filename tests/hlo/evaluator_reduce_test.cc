// The reference evaluator's reductions, sort and map against results worked out by hand:
// reduce with add and with an argmax-style variadic reducer, reduce-window with strides,
// padding and dilation, a stable sort by a comparator, map.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/evaluator_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::ElementsAre;
using testing::EvaluateOne;
using testing::ModuleText;
using testing::Values;

const char* kAddS32 =
    "%add.s32 (a: s32[], b: s32[]) -> s32[] {\n"
    "  %a = s32[] parameter(0)\n"
    "  %b = s32[] parameter(1)\n"
    "  ROOT %sum = s32[] add(%a, %b)\n"
    "}\n"
    "%max.s32 (c: s32[], d: s32[]) -> s32[] {\n"
    "  %c = s32[] parameter(0)\n"
    "  %d = s32[] parameter(1)\n"
    "  ROOT %max = s32[] maximum(%c, %d)\n"
    "}\n";

TEST(ReferenceReduce, AddOverOneAndAllDimensions) {
  const auto out = EvaluateOne(ModuleText(R"(
  %m = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  %zero = s32[] constant(0)
  %ten = s32[] constant(10)
  %rows = s32[2] reduce(%m, %zero), dimensions={1}, to_apply=%add.s32
  %cols = s32[3] reduce(%m, %ten), dimensions={0}, to_apply=%add.s32
  %all = s32[] reduce(%m, %zero), dimensions={0,1}, to_apply=%add.s32
  ROOT %t = (s32[2], s32[3], s32[]) tuple(%rows, %cols, %all))",
                                          1, 1, kAddS32));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(Values(out[0]), ElementsAre(6, 15));
  EXPECT_THAT(Values(out[1]), ElementsAre(15, 17, 19));  // the init value counts once
  EXPECT_THAT(Values(out[2]), ElementsAre(21));
}

TEST(ReferenceReduce, VariadicArgmaxKeepsTheFirstMaximum) {
  const std::string argmax =
      "%argmax (v0: f32[], i0: s32[], v1: f32[], i1: s32[]) -> (f32[], s32[]) {\n"
      "  %v0 = f32[] parameter(0)\n"
      "  %i0 = s32[] parameter(1)\n"
      "  %v1 = f32[] parameter(2)\n"
      "  %i1 = s32[] parameter(3)\n"
      "  %greater = pred[] compare(%v1, %v0), direction=GT\n"
      "  %v = f32[] select(%greater, %v1, %v0)\n"
      "  %i = s32[] select(%greater, %i1, %i0)\n"
      "  ROOT %r = (f32[], s32[]) tuple(%v, %i)\n"
      "}\n";
  const auto out = EvaluateOne(ModuleText(R"(
  %values = f32[2,4] constant({{3, 7, 7, 1}, {-1, -5, 0, 0}})
  %index = s32[2,4] iota(), iota_dimension=1
  %low = f32[] constant(-inf)
  %none = s32[] constant(-1)
  ROOT %argmax = (f32[2], s32[2]) reduce(%values, %index, %low, %none), dimensions={1}, to_apply=%argmax)",
                                          1, 1, argmax));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values(out[0]), ElementsAre(7, 0));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 2));
}

TEST(ReferenceReduce, ReduceWindowWithStridesPaddingAndDilation) {
  const auto out = EvaluateOne(ModuleText(R"(
  %v = s32[5] constant({1, 2, 3, 4, 5})
  %zero = s32[] constant(0)
  %sums = s32[4] reduce-window(%v, %zero), window={size=2}, to_apply=%add.s32
  %padded = s32[6] reduce-window(%v, %zero), window={size=2 pad=1_1}, to_apply=%add.s32
  %strided = s32[2] reduce-window(%v, %zero), window={size=2 stride=2}, to_apply=%add.s32
  %dilated = s32[3] reduce-window(%v, %zero), window={size=2 rhs_dilate=2}, to_apply=%add.s32
  %base = s32[4] reduce-window(%v, %zero), window={size=3 stride=2 lhs_dilate=2}, to_apply=%add.s32
  %m = s32[2,4] constant({{1, 8, 2, 0}, {3, 4, 9, 6}})
  %low = s32[] constant(-100)
  %pool = s32[1,2] reduce-window(%m, %low), window={size=2x2 stride=2x2}, to_apply=%max.s32
  ROOT %t = (s32[4], s32[6], s32[2], s32[3], s32[4], s32[1,2]) tuple(%sums, %padded, %strided, %dilated, %base, %pool))",
                                          1, 1, kAddS32));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_THAT(Values(out[0]), ElementsAre(3, 5, 7, 9));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 3, 5, 7, 9, 5));
  EXPECT_THAT(Values(out[2]), ElementsAre(3, 7));
  EXPECT_THAT(Values(out[3]), ElementsAre(4, 6, 8));  // v[i] + v[i+2]
  // The base dilated by 2 is 1 _ 2 _ 3 _ 4 _ 5; windows of 3 every 2 hold two elements.
  EXPECT_THAT(Values(out[4]), ElementsAre(3, 5, 7, 9));
  EXPECT_THAT(Values(out[5]), ElementsAre(8, 9));
}

TEST(ReferenceSort, SortsKeysWithPayloadsStably) {
  const std::string less =
      "%less (a: s32[], b: s32[], c: s32[], d: s32[]) -> pred[] {\n"
      "  %a = s32[] parameter(0)\n"
      "  %b = s32[] parameter(1)\n"
      "  %c = s32[] parameter(2)\n"
      "  %d = s32[] parameter(3)\n"
      "  ROOT %lt = pred[] compare(%a, %b), direction=LT\n"
      "}\n";
  const auto out = EvaluateOne(ModuleText(R"(
  %keys = s32[2,4] constant({{2, 1, 2, 1}, {9, 8, 7, 6}})
  %payload = s32[2,4] iota(), iota_dimension=1
  ROOT %sort = (s32[2,4], s32[2,4]) sort(%keys, %payload), dimensions={1}, is_stable=true, to_apply=%less)",
                                          1, 1, less));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 1, 2, 2, 6, 7, 8, 9));
  EXPECT_THAT(Values(out[1]), ElementsAre(1, 3, 0, 2, 3, 2, 1, 0));
}

TEST(ReferenceMap, AppliesTheComputationPerElement) {
  const std::string square_plus =
      "%square_plus (x: s32[], y: s32[]) -> s32[] {\n"
      "  %x = s32[] parameter(0)\n"
      "  %y = s32[] parameter(1)\n"
      "  %xx = s32[] multiply(%x, %x)\n"
      "  ROOT %r = s32[] add(%xx, %y)\n"
      "}\n";
  const auto out = EvaluateOne(ModuleText(R"(
  %x = s32[3] constant({1, 2, 3})
  %y = s32[3] constant({10, 20, 30})
  ROOT %map = s32[3] map(%x, %y), dimensions={0}, to_apply=%square_plus)",
                                          1, 1, square_plus));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values(out[0]), ElementsAre(11, 24, 39));
}

}  // namespace
}  // namespace tpusim::hlo::reference
