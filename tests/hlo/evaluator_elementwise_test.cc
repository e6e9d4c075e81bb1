// The reference evaluator's elementwise operations against results worked out by hand:
// integers wrap to their width, division by zero and shifts past the width follow XLA,
// maximum and minimum propagate NaN, conversions saturate and round to nearest even.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/hlo/evaluator_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::ElementsAre;
using testing::EvaluateOne;
using ::testing::IsNan;
using testing::ModuleText;
using testing::Values;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ReferenceElementwise, S32ArithmeticWrapsAndDividesLikeXla) {
  const auto out = EvaluateOne(ModuleText(R"(
  %a = s32[4] constant({2147483647, -2147483648, 7, -7})
  %b = s32[4] constant({1, -1, 0, 2})
  %add = s32[4] add(%a, %b)
  %sub = s32[4] subtract(%a, %b)
  %mul = s32[4] multiply(%a, %a)
  %div = s32[4] divide(%a, %b)
  %rem = s32[4] remainder(%a, %b)
  %neg = s32[4] negate(%a)
  %abs = s32[4] abs(%a)
  ROOT %t = (s32[4], s32[4], s32[4], s32[4], s32[4], s32[4], s32[4]) tuple(%add, %sub, %mul, %div, %rem, %neg, %abs))"));
  ASSERT_EQ(out.size(), 7u);
  EXPECT_THAT(Values(out[0]), ElementsAre(-2147483648.0, 2147483647, 7, -5));
  EXPECT_THAT(Values(out[1]), ElementsAre(2147483646, -2147483647, 7, -9));
  // (2^31 - 1)^2 = 2^62 - 2^32 + 1 and (-2^31)^2 = 2^62 keep only their low 32 bits.
  EXPECT_THAT(Values(out[2]), ElementsAre(1, 0, 49, 49));
  // MIN / -1 wraps to MIN, x / 0 is -1, and division truncates toward zero.
  EXPECT_THAT(Values(out[3]), ElementsAre(2147483647, -2147483648.0, -1, -3));
  // x % 0 is x, MIN % -1 is 0, the remainder has the dividend's sign.
  EXPECT_THAT(Values(out[4]), ElementsAre(0, 0, 7, -1));
  EXPECT_THAT(Values(out[5]), ElementsAre(-2147483647, -2147483648.0, -7, 7));
  EXPECT_THAT(Values(out[6]), ElementsAre(2147483647, -2147483648.0, 7, 7));
}

TEST(ReferenceElementwise, NarrowAndWideIntegersWrapToTheirWidth) {
  const auto out = EvaluateOne(ModuleText(R"(
  %s8 = s8[2] constant({127, -128})
  %s8.b = s8[2] constant({1, -1})
  %s8.add = s8[2] add(%s8, %s8.b)
  %s8.mul = s8[2] multiply(%s8, %s8.b)
  %u32 = u32[2] constant({0, 4294967295})
  %u32.b = u32[2] constant({1, 0})
  %u32.sub = u32[2] subtract(%u32, %u32.b)
  %u32.div = u32[2] divide(%u32, %u32.b)
  %u32.max = u32[2] maximum(%u32, %u32.b)
  %s64 = s64[] constant(9223372036854775807)
  %s64.one = s64[] constant(1)
  %s64.add = s64[] add(%s64, %s64.one)
  ROOT %t = (s8[2], s8[2], u32[2], u32[2], u32[2], s64[]) tuple(%s8.add, %s8.mul, %u32.sub, %u32.div, %u32.max, %s64.add))"));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_THAT(Values(out[0]), ElementsAre(-128, -128 + -1 + 256));
  EXPECT_THAT(Values(out[1]), ElementsAre(127, -128));  // -128 * -1 = 128 wraps to -128
  EXPECT_THAT(Values(out[2]), ElementsAre(4294967295.0, 4294967295.0));
  // Unsigned division by zero gives all bits set.
  EXPECT_THAT(Values(out[3]), ElementsAre(0, 4294967295.0));
  EXPECT_THAT(Values(out[4]), ElementsAre(1, 4294967295.0));  // compared unsigned
  EXPECT_THAT(Values(out[5]), ElementsAre(-9223372036854775808.0));
}

TEST(ReferenceElementwise, ShiftsPowersAndBitwiseOps) {
  const auto out = EvaluateOne(ModuleText(R"(
  %a = s32[5] constant({1, -8, -8, -8, 5})
  %b = s32[5] constant({31, 1, 40, 28, -1})
  %shl = s32[5] shift-left(%a, %b)
  %sra = s32[5] shift-right-arithmetic(%a, %b)
  %srl = s32[5] shift-right-logical(%a, %b)
  %base = s32[5] constant({3, 2, 1, 2, -2})
  %exponent = s32[5] constant({4, -1, -5, 31, 3})
  %pow = s32[5] power(%base, %exponent)
  %x = s32[3] constant({12, 0, 1})
  %y = s32[3] constant({10, 0, 1})
  %and = s32[3] and(%x, %y)
  %or = s32[3] or(%x, %y)
  %xor = s32[3] xor(%x, %y)
  %not = s32[3] not(%x)
  %popcnt = s32[3] popcnt(%not)
  %clz = s32[3] count-leading-zeros(%x)
  %p = pred[2] constant({true, false})
  %q = pred[2] constant({true, true})
  %pand = pred[2] and(%p, %q)
  %pxor = pred[2] xor(%p, %q)
  %pnot = pred[2] not(%p)
  ROOT %t = (s32[5], s32[5], s32[5], s32[5], s32[3], s32[3], s32[3], s32[3], s32[3], s32[3], pred[2], pred[2], pred[2]) tuple(%shl, %sra, %srl, %pow, %and, %or, %xor, %not, %popcnt, %clz, %pand, %pxor, %pnot))"));
  ASSERT_EQ(out.size(), 13u);
  // A shift by the width or more, or by a negative amount, shifts everything out.
  EXPECT_THAT(Values(out[0]), ElementsAre(-2147483648.0, -16, 0, -2147483648.0, 0));
  EXPECT_THAT(Values(out[1]), ElementsAre(0, -4, -1, -1, 0));
  EXPECT_THAT(Values(out[2]), ElementsAre(0, 2147483644, 0, 15, 0));
  // A negative exponent gives 0 except for base 1; 2^31 wraps.
  EXPECT_THAT(Values(out[3]), ElementsAre(81, 0, 1, -2147483648.0, -8));
  EXPECT_THAT(Values(out[4]), ElementsAre(8, 0, 1));
  EXPECT_THAT(Values(out[5]), ElementsAre(14, 0, 1));
  EXPECT_THAT(Values(out[6]), ElementsAre(6, 0, 0));
  EXPECT_THAT(Values(out[7]), ElementsAre(-13, -1, -2));
  EXPECT_THAT(Values(out[8]), ElementsAre(30, 32, 31));
  EXPECT_THAT(Values(out[9]), ElementsAre(28, 32, 31));
  EXPECT_THAT(Values(out[10]), ElementsAre(1, 0));
  EXPECT_THAT(Values(out[11]), ElementsAre(0, 1));
  EXPECT_THAT(Values(out[12]), ElementsAre(0, 1));
}

TEST(ReferenceElementwise, NanPropagatesThroughMaximumAndMinimumAndComparesUnordered) {
  const auto out = EvaluateOne(ModuleText(R"(
  %x = f32[4] constant({nan, 1, -inf, 2})
  %y = f32[4] constant({1, nan, 0, 3})
  %max = f32[4] maximum(%x, %y)
  %min = f32[4] minimum(%x, %y)
  %eq = pred[4] compare(%x, %y), direction=EQ
  %ne = pred[4] compare(%x, %y), direction=NE
  %lt = pred[4] compare(%x, %y), direction=LT
  %gt.total = pred[4] compare(%x, %y), direction=GT, comparison_type=TOTALORDER
  %div = f32[4] divide(%x, %y)
  ROOT %t = (f32[4], f32[4], pred[4], pred[4], pred[4], pred[4], f32[4]) tuple(%max, %min, %eq, %ne, %lt, %gt.total, %div))"));
  ASSERT_EQ(out.size(), 7u);
  EXPECT_THAT(Values(out[0]), ElementsAre(IsNan(), IsNan(), 0, 3));
  EXPECT_THAT(Values(out[1]), ElementsAre(IsNan(), IsNan(), -kInf, 2));
  EXPECT_THAT(Values(out[2]), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Values(out[3]), ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(Values(out[4]), ElementsAre(0, 0, 1, 1));
  // In the total order NaN is above everything.
  EXPECT_THAT(Values(out[5]), ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(Values(out[6]),
              ElementsAre(IsNan(), IsNan(), -kInf, static_cast<double>(2.0f / 3.0f)));
}

TEST(ReferenceElementwise, FloatUnaryOperations) {
  const auto out = EvaluateOne(ModuleText(R"(
  %x = f32[4] constant({-2.5, 2.5, 3.5, -1.5})
  %abs = f32[4] abs(%x)
  %sign = f32[4] sign(%x)
  %floor = f32[4] floor(%x)
  %ceil = f32[4] ceil(%x)
  %afz = f32[4] round-nearest-afz(%x)
  %even = f32[4] round-nearest-even(%x)
  %y = f32[6] constant({0, 1, 4, -8, inf, nan})
  %exp = f32[6] exponential(%y)
  %log = f32[6] log(%y)
  %sqrt = f32[6] sqrt(%y)
  %rsqrt = f32[6] rsqrt(%y)
  %cbrt = f32[6] cbrt(%y)
  %logistic = f32[6] logistic(%y)
  %finite = pred[6] is-finite(%y)
  ROOT %t = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[6], f32[6], f32[6], f32[6], f32[6], f32[6], pred[6]) tuple(%abs, %sign, %floor, %ceil, %afz, %even, %exp, %log, %sqrt, %rsqrt, %cbrt, %logistic, %finite))"));
  ASSERT_EQ(out.size(), 13u);
  EXPECT_THAT(Values(out[0]), ElementsAre(2.5, 2.5, 3.5, 1.5));
  EXPECT_THAT(Values(out[1]), ElementsAre(-1, 1, 1, -1));
  EXPECT_THAT(Values(out[2]), ElementsAre(-3, 2, 3, -2));
  EXPECT_THAT(Values(out[3]), ElementsAre(-2, 3, 4, -1));
  EXPECT_THAT(Values(out[4]), ElementsAre(-3, 3, 4, -2));
  EXPECT_THAT(Values(out[5]), ElementsAre(-2, 2, 4, -2));
  EXPECT_THAT(Values(out[6]),
              ElementsAre(1, static_cast<double>(static_cast<float>(M_E)),
                          static_cast<double>(static_cast<float>(std::exp(4.0))),
                          static_cast<double>(static_cast<float>(std::exp(-8.0))), kInf, IsNan()));
  EXPECT_THAT(Values(out[7]),
              ElementsAre(-kInf, 0, static_cast<double>(static_cast<float>(std::log(4.0))), IsNan(),
                          kInf, IsNan()));
  EXPECT_THAT(Values(out[8]), ElementsAre(0, 1, 2, IsNan(), kInf, IsNan()));
  EXPECT_THAT(Values(out[9]), ElementsAre(kInf, 1, 0.5, IsNan(), 0, IsNan()));
  EXPECT_THAT(Values(out[10]),
              ElementsAre(0, 1, static_cast<double>(static_cast<float>(std::cbrt(4.0))), -2, kInf,
                          IsNan()));
  EXPECT_EQ(Values(out[11])[0], 0.5);
  EXPECT_EQ(Values(out[11])[4], 1);
  EXPECT_THAT(Values(out[12]), ElementsAre(1, 1, 1, 1, 0, 0));
}

TEST(ReferenceElementwise, NarrowFloatsRoundToNearestEven) {
  const auto out = EvaluateOne(ModuleText(R"(
  %a = bf16[2] constant({256, 256})
  %b = bf16[2] constant({1, 3})
  %bf16.add = bf16[2] add(%a, %b)
  %c = f16[2] constant({2048, 2048})
  %d = f16[2] constant({1, 3})
  %f16.add = f16[2] add(%c, %d)
  ROOT %t = (bf16[2], f16[2]) tuple(%bf16.add, %f16.add))"));
  ASSERT_EQ(out.size(), 2u);
  // bf16 keeps 8 significant bits: 257 and 259 are halfway; the even neighbour wins.
  EXPECT_THAT(Values(out[0]), ElementsAre(256, 260));
  // f16 keeps 11: 2049 and 2051 are halfway between multiples of 2.
  EXPECT_THAT(Values(out[1]), ElementsAre(2048, 2052));
}

TEST(ReferenceElementwise, ConvertSaturatesMapsNanToZeroAndRoundsToNearestEven) {
  const auto out = EvaluateOne(ModuleText(R"(
  %x = f32[6] constant({1e10, -1e10, nan, 2.7, -2.7, 0})
  %s32 = s32[6] convert(%x)
  %u32 = u32[6] convert(%x)
  %s8 = s8[6] convert(%x)
  %pred = pred[6] convert(%x)
  %f = f32[3] constant({1.00390625, 1.01171875, -1.00390625})
  %bf16 = bf16[3] convert(%f)
  %i = s32[3] constant({16777217, 257, -1})
  %i.f32 = f32[3] convert(%i)
  %i.bf16 = bf16[3] convert(%i)
  %i.u32 = u32[3] convert(%i)
  %i.s8 = s8[3] convert(%i)
  ROOT %t = (s32[6], u32[6], s8[6], pred[6], bf16[3], f32[3], bf16[3], u32[3], s8[3]) tuple(%s32, %u32, %s8, %pred, %bf16, %i.f32, %i.bf16, %i.u32, %i.s8))"));
  ASSERT_EQ(out.size(), 9u);
  EXPECT_THAT(Values(out[0]), ElementsAre(2147483647, -2147483648.0, 0, 2, -2, 0));
  EXPECT_THAT(Values(out[1]), ElementsAre(4294967295.0, 0, 0, 2, 0, 0));
  EXPECT_THAT(Values(out[2]), ElementsAre(127, -128, 0, 2, -2, 0));
  EXPECT_THAT(Values(out[3]), ElementsAre(1, 1, 1, 1, 1, 0));
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (odd): down; 1 + 3 * 2^-8: up to 1 + 2^-6.
  EXPECT_THAT(Values(out[4]), ElementsAre(1, 1.015625, -1));
  EXPECT_THAT(Values(out[5]), ElementsAre(16777216, 257, -1));
  EXPECT_THAT(Values(out[6]), ElementsAre(16777216, 256, -1));
  // Integer to integer keeps the low bits.
  EXPECT_THAT(Values(out[7]), ElementsAre(16777217, 257, 4294967295.0));
  EXPECT_THAT(Values(out[8]), ElementsAre(1, 1, -1));
}

TEST(ReferenceElementwise, SelectAndClampTakeScalarsOrArrays) {
  const auto out = EvaluateOne(ModuleText(R"(
  %p = pred[3] constant({true, false, true})
  %no = pred[] constant(false)
  %a = s32[3] constant({1, 2, 3})
  %b = s32[3] constant({10, 20, 30})
  %select = s32[3] select(%p, %a, %b)
  %select.scalar = s32[3] select(%no, %a, %b)
  %low = s32[] constant(0)
  %high = s32[] constant(10)
  %x = s32[3] constant({-5, 5, 15})
  %clamp = s32[3] clamp(%low, %x, %high)
  %flow = f32[3] constant({0, 0, 0})
  %fx = f32[3] constant({-1, nan, 2})
  %fhigh = f32[3] constant({1, 1, 1})
  %fclamp = f32[3] clamp(%flow, %fx, %fhigh)
  ROOT %t = (s32[3], s32[3], s32[3], f32[3]) tuple(%select, %select.scalar, %clamp, %fclamp))"));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(Values(out[0]), ElementsAre(1, 20, 3));
  EXPECT_THAT(Values(out[1]), ElementsAre(10, 20, 30));
  EXPECT_THAT(Values(out[2]), ElementsAre(0, 5, 10));
  EXPECT_THAT(Values(out[3]), ElementsAre(0, IsNan(), 1));
}

}  // namespace
}  // namespace tpusim::hlo::reference
