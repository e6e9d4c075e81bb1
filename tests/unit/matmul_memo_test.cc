// The matmul memo (dsl/matmul_memo.h) returns a kept result only for operands that are byte
// for byte the same, and computes everything else.

#include "dsl/matmul_memo.h"

#include <gtest/gtest.h>

#include "dsl/mxu_numerics.h"

namespace tpusim::dsl {
namespace {

// 256 x 256 x 256 multiply-adds: just large enough to be kept.
constexpr int64_t kSide = 256;
static_assert(kSide * kSide * kSide >= MatmulMemo::kMinMultiplyAdds);

Array Dot(const Array& a, const Array& b, const Array* accumulator = nullptr) {
  return MxuMatmul(a, b, DType::kF32, Precision::kHighest, DType::kF32, accumulator);
}

TEST(MatmulMemo, AChangedOperandByteGivesItsOwnProduct) {
  const MatmulMemoRun run;
  const Array a = Array::Random({kSide, kSide}, DType::kF32, 1);
  const Array b = Array::Random({kSide, kSide}, DType::kF32, 2);
  const Array first = Dot(a, b);
  Array changed = b;
  changed.SetFlat(kSide * 5 + 7, changed.GetFlat(kSide * 5 + 7) + 1);  // row 5, column 7
  const Array second = Dot(a, changed);
  // Column 7 of the product moves by column 5 of a; every other column stays.
  for (int64_t row = 0; row < kSide; ++row) {
    EXPECT_NEAR(second.GetFlat(row * kSide + 7) - first.GetFlat(row * kSide + 7),
                a.GetFlat(row * kSide + 5), 1e-3)
        << "row " << row;
    EXPECT_EQ(second.GetFlat(row * kSide + 8), first.GetFlat(row * kSide + 8));
  }
  // The same operands again give the first product, bit for bit.
  EXPECT_EQ(Dot(a, b).bytes(), first.bytes());
}

TEST(MatmulMemo, TheAccumulatorAndThePrecisionArePartOfTheDot) {
  const MatmulMemoRun run;
  const Array a = Array::Random({kSide, kSide}, DType::kF32, 3);
  const Array b = Array::Random({kSide, kSide}, DType::kF32, 4);
  const Array plain = Dot(a, b);
  const Array ones = Array::Random({kSide, kSide}, DType::kF32, 5);
  const Array accumulated = Dot(a, b, &ones);
  EXPECT_NEAR(accumulated.GetFlat(0), plain.GetFlat(0) + ones.GetFlat(0), 1e-3);
  const Array one_pass = MxuMatmul(a, b, DType::kF32, Precision::kDefault, DType::kF32);
  EXPECT_NE(one_pass.bytes(), plain.bytes()) << "DEFAULT rounds f32 operands to bf16";
}

TEST(MatmulMemo, ARunStartsEmpty) {
  MatmulMemo& memo = ThreadMatmulMemo();
  const Array a = Array::Random({kSide, kSide}, DType::kF32, 6);
  const MatmulMemo::Key key{DType::kF32, Precision::kHighest, DType::kF32};
  {
    const MatmulMemoRun run;
    Dot(a, a);
    EXPECT_NE(memo.Find(a, a, nullptr, key), nullptr);
  }
  EXPECT_EQ(memo.Find(a, a, nullptr, key), nullptr) << "a run's results end with it";
}

}  // namespace
}  // namespace tpusim::dsl
