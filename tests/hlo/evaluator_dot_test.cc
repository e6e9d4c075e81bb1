// The reference evaluator's dot (dimension numbers, batch dims, TPU precision) and the seed
// MLP modules (tests/hlo/modules/): data parallel, tensor parallel and FSDP agree with a
// hand computation of relu(X W1) W2 on inputs chosen so that it is exact.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/evaluator_test_support.h"
#include "tests/hlo/hlo_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::ElementsAre;
using testing::EvaluateOne;
using testing::F32;
using testing::ModuleText;
using testing::Values;

TEST(ReferenceDot, MatrixProductBatchDimsAndContractingTheLeadingDimension) {
  const auto out = EvaluateOne(ModuleText(R"(
  %a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  %b = s32[3,2] constant({{7, 8}, {9, 10}, {11, 12}})
  %ab = s32[2,2] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %l = s32[2,1,2] constant({{{1, 2}}, {{3, 4}}})
  %r = s32[2,2,1] constant({{{5}, {6}}, {{7}, {8}}})
  %batched = s32[2,1,1] dot(%l, %r), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  %c = s32[2,2] constant({{1, 2}, {3, 4}})
  %at = s32[3,2] dot(%a, %c), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %big = s32[1,2] constant({{65536, 65536}})
  %big.r = s32[2,1] constant({{65536}, {1}})
  %wrapped = s32[1,1] dot(%big, %big.r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (s32[2,2], s32[2,1,1], s32[3,2], s32[1,1]) tuple(%ab, %batched, %at, %wrapped))"));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(Values(out[0]), ElementsAre(58, 64, 139, 154));
  EXPECT_THAT(Values(out[1]), ElementsAre(17, 53));
  EXPECT_THAT(Values(out[2]), ElementsAre(13, 18, 17, 24, 21, 30));
  EXPECT_THAT(Values(out[3]), ElementsAre(65536));  // 2^32 + 2^16 wraps to 2^16
}

TEST(ReferenceDot, BatchDimensionsAnywhereComeFirstInTheResult) {
  const auto out = EvaluateOne(ModuleText(R"(
  %l = s32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  %r = s32[2,3] constant({{1, 1, 1}, {2, 2, 2}})
  %only.batch = s32[2] dot(%l, %r), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={1}
  %l3 = s32[3,2,2] constant({{{1, 11}, {1, 11}}, {{2, 12}, {2, 12}}, {{3, 13}, {3, 13}}})
  %batch.free = s32[2,2] dot(%l3, %r), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT %t = (s32[2], s32[2,2]) tuple(%only.batch, %batch.free))"));
  ASSERT_EQ(out.size(), 2u);
  // Per batch b, lhs[k][b] . rhs[b][k]: {1,3,5} . {1,1,1} = 9 and {2,4,6} . {2,2,2} = 24.
  EXPECT_THAT(Values(out[0]), ElementsAre(9, 24));
  // [b][f] = sum_k l3[k][b][f] r[b][k] with l3[k][b][f] = k + 1 + 10 f: b = 0 gives
  // 1+2+3 = 6 and 11+12+13 = 36; b = 1 twice that.
  EXPECT_THAT(Values(out[1]), ElementsAre(6, 36, 12, 72));
}

TEST(ReferenceDot, F32AtDefaultPrecisionRoundsOperandsToBf16) {
  // 1 + 2^-10 is not a bf16: one MXU pass sees 1. HIGH and HIGHEST keep it.
  const auto out = EvaluateOne(ModuleText(R"(
  %a = f32[1,2] constant({{1.0009765625, 1}})
  %b = f32[2,1] constant({{1}, {1}})
  %default = f32[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %written = f32[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={default,default}
  %algorithm = f32[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32
  %high = f32[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={high,high}
  %highest = f32[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  ROOT %t = (f32[1,1], f32[1,1], f32[1,1], f32[1,1], f32[1,1]) tuple(%default, %written, %algorithm, %high, %highest))"));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_THAT(Values(out[0]), ElementsAre(2));
  EXPECT_THAT(Values(out[1]), ElementsAre(2));
  EXPECT_THAT(Values(out[2]), ElementsAre(2));
  EXPECT_THAT(Values(out[3]), ElementsAre(2.0009765625));
  EXPECT_THAT(Values(out[4]), ElementsAre(2.0009765625));
}

TEST(ReferenceDot, OnePassDotsAccumulateInF32AndRoundOnceToTheResultType) {
  const auto out = EvaluateOne(ModuleText(R"(
  %a = f32[1,3] constant({{16777216, 1, 1}})
  %ones = f32[3,1] constant({{1}, {1}, {1}})
  %f32.default = f32[1,1] dot(%a, %ones), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %f32.highest = f32[1,1] dot(%a, %ones), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  %x = bf16[1,2] constant({{256, 1}})
  %y = bf16[2,1] constant({{1}, {1}})
  %to.bf16 = bf16[1,1] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %to.f32 = f32[1,1] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[1,1], f32[1,1], bf16[1,1], f32[1,1]) tuple(%f32.default, %f32.highest, %to.bf16, %to.f32))"));
  ASSERT_EQ(out.size(), 4u);
  // 2^24 + 1 rounds back to 2^24 in f32, twice; in double the sum is exact.
  EXPECT_THAT(Values(out[0]), ElementsAre(16777216));
  EXPECT_THAT(Values(out[1]), ElementsAre(16777218));
  // 257 in f32, then once to bf16 (halfway: to the even 256).
  EXPECT_THAT(Values(out[2]), ElementsAre(256));
  EXPECT_THAT(Values(out[3]), ElementsAre(257));
}

// The MLP's global inputs: X = 2 I (16 x 32), W1 maps row k to +1 at column 2k and -3 at
// 2k+1, W2[j][n] = j + n. So X W1 is 2 at (i, 2i) and -6 at (i, 2i+1); relu keeps the 2;
// and y[i][n] = 2 W2[2i][n] = 4i + 2n. Every value is an integer below 256, exact in bf16.
struct MlpInputs {
  dsl::Array x{{16, 32}, dsl::DType::kF32};
  dsl::Array w1{{32, 128}, dsl::DType::kF32};
  dsl::Array w2{{128, 32}, dsl::DType::kF32};
  MlpInputs() {
    for (int64_t i = 0; i < 16; ++i)
      x.SetFlat(i * 32 + i, 2);
    for (int64_t k = 0; k < 32; ++k) {
      w1.SetFlat(k * 128 + 2 * k, 1);
      w1.SetFlat(k * 128 + 2 * k + 1, -3);
    }
    for (int64_t j = 0; j < 128; ++j)
      for (int64_t n = 0; n < 32; ++n)
        w2.SetFlat(j * 32 + n, static_cast<double>(j + n));
  }
};

// Rows [row, row + rows) of y = 4i + 2n.
void ExpectMlpRows(const dsl::Array& y, int64_t row, int64_t rows, const std::string& where) {
  ASSERT_EQ(y.shape(), (dsl::Shape{rows, 32})) << where;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t n = 0; n < 32; ++n)
      ASSERT_EQ(y.GetFlat(i * 32 + n), static_cast<double>(4 * (row + i) + 2 * n))
          << where << " y[" << row + i << "][" << n << "]";
}

Module ParseSeed(const std::string& name) {
  return ParseModuleFile(hlo::testing::ModulePath(name));
}

TEST(ReferenceMlp, DataParallelShardsTheBatch) {
  const MlpInputs in;
  std::vector<std::vector<dsl::Array>> parameters;
  for (int64_t d = 0; d < 8; ++d)
    parameters.push_back({in.x.Slice({2 * d, 0}, {2, 32}), in.w1, in.w2});
  const auto results = Evaluate(ParseSeed("mlp_data_parallel.hlo"), parameters);
  ASSERT_EQ(results.size(), 8u);
  for (int64_t d = 0; d < 8; ++d) {
    ASSERT_EQ(results[static_cast<size_t>(d)].size(), 1u);
    ExpectMlpRows(results[static_cast<size_t>(d)][0], 2 * d, 2, "device " + std::to_string(d));
  }
}

TEST(ReferenceMlp, TensorParallelShardsTheHiddenLayerAndAllReduces) {
  const MlpInputs in;
  std::vector<std::vector<dsl::Array>> parameters;
  for (int64_t d = 0; d < 8; ++d)
    parameters.push_back(
        {in.x, in.w1.Slice({0, 16 * d}, {32, 16}), in.w2.Slice({16 * d, 0}, {16, 32})});
  const auto results = Evaluate(ParseSeed("mlp_tensor_parallel.hlo"), parameters);
  ASSERT_EQ(results.size(), 8u);
  for (int64_t d = 0; d < 8; ++d) {
    ASSERT_EQ(results[static_cast<size_t>(d)].size(), 1u);
    ExpectMlpRows(results[static_cast<size_t>(d)][0], 0, 16, "device " + std::to_string(d));
  }
}

TEST(ReferenceMlp, FsdpGathersTheWeightsFirst) {
  const MlpInputs in;
  std::vector<std::vector<dsl::Array>> parameters;
  for (int64_t d = 0; d < 8; ++d) {
    parameters.push_back({in.x.Slice({2 * d, 0}, {2, 32}), in.w1.Slice({0, 16 * d}, {32, 16}),
                          in.w2.Slice({16 * d, 0}, {16, 32})});
  }
  const auto results = Evaluate(ParseSeed("mlp_fsdp.hlo"), parameters);
  ASSERT_EQ(results.size(), 8u);
  for (int64_t d = 0; d < 8; ++d) {
    ASSERT_EQ(results[static_cast<size_t>(d)].size(), 1u);
    ExpectMlpRows(results[static_cast<size_t>(d)][0], 2 * d, 2, "device " + std::to_string(d));
  }
}

}  // namespace
}  // namespace tpusim::hlo::reference
