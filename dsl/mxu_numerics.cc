#include "dsl/mxu_numerics.h"

#include <Eigen/Core>
#include <cstring>
#include <vector>

#include "dsl/matmul_memo.h"

namespace tpusim::dsl {

namespace {

using Matrix = HostMatrix;
// Unsigned 64-bit arithmetic is exact modulo 2^64, so its low 32 bits are the int32 result.
using IntMatrix = Eigen::Matrix<uint64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

IntMatrix ToIntMatrix(const Array& a, int64_t rows, int64_t cols) {
  IntMatrix m(rows, cols);
  for (int64_t i = 0, elements = a.size(); i < elements; ++i)
    m.data()[i] = static_cast<uint64_t>(static_cast<int64_t>(a.GetFlat(i)));
  return m;
}

Matrix RoundToBf16(const Matrix& x) {
  return x.unaryExpr([](float v) { return static_cast<float>(bf16(v)); });
}

// x as the sum of `count` bf16-valued pieces, largest first: each piece rounds what the
// earlier ones left over.
std::vector<Matrix> SplitBf16(const Matrix& x, int count) {
  std::vector<Matrix> pieces;
  Matrix rest = x;
  for (int i = 0; i < count; ++i) {
    pieces.push_back(RoundToBf16(rest));
    rest -= pieces.back();
  }
  return pieces;
}

Matrix FloatProduct(const Matrix& a, const Matrix& b, DType operands, Precision precision) {
  if (operands == DType::kBF16) return a * b;  // already bf16-valued: one exact pass
  if (precision == Precision::kDefault) return RoundToBf16(a) * RoundToBf16(b);
  if (precision == Precision::kHigh) {
    const auto x = SplitBf16(a, 2), y = SplitBf16(b, 2);
    Matrix sum = x[1] * y[0];
    sum += x[0] * y[1];
    sum += x[0] * y[0];
    return sum;
  }
  const auto x = SplitBf16(a, 3), y = SplitBf16(b, 3);
  Matrix sum = x[1] * y[1];
  sum += x[2] * y[0];
  sum += x[0] * y[2];
  sum += x[1] * y[0];
  sum += x[0] * y[1];
  sum += x[0] * y[0];
  return sum;
}

Array Product(const Array& a, const Array& b, DType operands, Precision precision, DType result,
              const Array* accumulator) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  Array out({m, n}, result);
  if (operands == DType::kInt8 || operands == DType::kInt32) {
    IntMatrix product = ToIntMatrix(a, m, k) * ToIntMatrix(b, k, n);
    if (accumulator) product += ToIntMatrix(*accumulator, m, n);
    for (int64_t i = 0, elements = out.size(); i < elements; ++i)
      out.SetFlat(i, static_cast<int32_t>(static_cast<uint32_t>(product.data()[i])));
    return out;
  }
  Matrix product = FloatProduct(ToHostMatrix(a, m, k), ToHostMatrix(b, k, n), operands, precision);
  if (accumulator) product += ToHostMatrix(*accumulator, m, n);
  FromHostMatrix(product, out);
  return out;
}

}  // namespace

HostMatrix ToHostMatrix(const Array& a, int64_t rows, int64_t cols) {
  HostMatrix m(rows, cols);
  if (a.dtype() == DType::kF32) {
    std::memcpy(m.data(), a.data(), a.nbytes());
  } else if (a.dtype() == DType::kBF16) {
    const auto* p = reinterpret_cast<const bf16*>(a.data());
    for (int64_t i = 0, elements = a.size(); i < elements; ++i)
      m.data()[i] = static_cast<float>(p[i]);
  } else {
    for (int64_t i = 0, elements = a.size(); i < elements; ++i)
      m.data()[i] = static_cast<float>(a.GetFlat(i));
  }
  return m;
}

void FromHostMatrix(const HostMatrix& m, Array& out) {
  if (out.dtype() == DType::kF32) {
    std::memcpy(out.data(), m.data(), out.nbytes());
  } else if (out.dtype() == DType::kBF16) {
    auto* p = reinterpret_cast<bf16*>(out.data());
    for (int64_t i = 0, elements = out.size(); i < elements; ++i)
      p[i] = bf16(m.data()[i]);
  } else {
    for (int64_t i = 0, elements = out.size(); i < elements; ++i)
      out.SetFlat(i, m.data()[i]);
  }
}

Array MxuMatmul(const Array& a, const Array& b, DType operands, Precision precision, DType result,
                const Array* accumulator) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const bool memoized = m * k * n >= MatmulMemo::kMinMultiplyAdds;
  const MatmulMemo::Key key{operands, precision, result};
  if (memoized) {
    if (const Array* known = ThreadMatmulMemo().Find(a, b, accumulator, key)) return *known;
  }
  Array out = Product(a, b, operands, precision, result, accumulator);
  if (memoized) ThreadMatmulMemo().Keep(a, b, accumulator, key, out);
  return out;
}

}  // namespace tpusim::dsl
