// dot with general dimension numbers: the result is (batch dims, lhs free dims, rhs free
// dims), each in operand order. Numerics as XLA on TPU:
// - f32 operands at DEFAULT precision (operand_precision absent or {default,default}, or
//   algorithm=dot_bf16_bf16_f32) are rounded to bf16 (one MXU pass) and the exact products
//   are accumulated in f32;
// - f32 at HIGH (bf16_3x) or HIGHEST (bf16_6x), or another algorithm, is close to f32: the
//   products are accumulated in double;
// - bf16 and f16 operands: exact products accumulated in f32;
// - integers: exact, wrapped to the result's width.
// Each batch is one Eigen matrix product (f32 or double accumulation); the result is rounded once
// to the instruction's element type.

#include <Eigen/Core>
#include <algorithm>

#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The row-major offsets of every index over `dimensions` of an array with `strides`.
std::vector<int64_t> Offsets(const Dims& dims, const Dims& strides,
                             const std::vector<int64_t>& dimensions) {
  Dims sizes;
  for (const int64_t d : dimensions)
    sizes.push_back(dims[static_cast<size_t>(d)]);
  std::vector<int64_t> offsets;
  ForEachIndex(sizes, [&](const Dims& index) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i)
      offset += index[i] * strides[static_cast<size_t>(dimensions[i])];
    offsets.push_back(offset);
  });
  return offsets;
}

std::vector<int64_t> FreeDims(size_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (size_t d = 0; d < rank; ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (!Contains(batch, dim) && !Contains(contracting, dim)) free.push_back(dim);
  }
  return free;
}

// Whether f32 operands are rounded to bf16: the one-pass DEFAULT precision.
bool OnePassBf16(const OpInput& in) {
  if (const Attribute* algorithm = in.instruction.FindAttribute("algorithm"))
    return DecodeString(*algorithm) == "dot_bf16_bf16_f32";
  const Attribute* precision = in.instruction.FindAttribute("operand_precision");
  if (!precision) precision = in.instruction.FindAttribute("precision_config");
  if (!precision) return true;
  bool one_pass = true;
  for (const Precision p : DecodePrecisions(*precision)) {
    if (p == Precision::kPackedNibble)
      Fail(in.instruction, "packed-nibble precision is not modelled");
    if (p != Precision::kDefault) one_pass = false;
  }
  return one_pass;
}

std::vector<double> RealValues(const dsl::Array& array, bool round_to_bf16) {
  std::vector<double> values(static_cast<size_t>(array.size()));
  for (int64_t i = 0; i < array.size(); ++i) {
    const double v = GetReal(array, i);
    values[static_cast<size_t>(i)] =
        round_to_bf16
            ? static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(v))))
            : v;
  }
  return values;
}

Value DotOp(const OpInput& in) {
  in.ExpectOperands(2);
  const dsl::Array &lhs = in.Array(0), &rhs = in.Array(1);
  const std::vector<int64_t> lhs_batch = in.IntList("lhs_batch_dims");
  const std::vector<int64_t> rhs_batch = in.IntList("rhs_batch_dims");
  const std::vector<int64_t> lhs_contracting = in.IntList("lhs_contracting_dims");
  const std::vector<int64_t> rhs_contracting = in.IntList("rhs_contracting_dims");
  const Dims &lhs_dims = lhs.shape(), &rhs_dims = rhs.shape();
  auto check = [&](const std::vector<int64_t>& l, const std::vector<int64_t>& r, const char* what) {
    bool fits = l.size() == r.size();
    for (size_t i = 0; fits && i < l.size(); ++i) {
      fits = l[i] >= 0 && r[i] >= 0 && l[i] < static_cast<int64_t>(lhs_dims.size()) &&
             r[i] < static_cast<int64_t>(rhs_dims.size()) &&
             lhs_dims[static_cast<size_t>(l[i])] == rhs_dims[static_cast<size_t>(r[i])];
    }
    if (!fits) Fail(in.instruction, std::string("its ") + what + " dimensions do not pair up");
  };
  check(lhs_batch, rhs_batch, "batch");
  check(lhs_contracting, rhs_contracting, "contracting");
  const std::vector<int64_t> lhs_free = FreeDims(lhs_dims.size(), lhs_batch, lhs_contracting);
  const std::vector<int64_t> rhs_free = FreeDims(rhs_dims.size(), rhs_batch, rhs_contracting);
  const Dims lhs_strides = Strides(lhs_dims), rhs_strides = Strides(rhs_dims);
  const std::vector<int64_t> batch_l = Offsets(lhs_dims, lhs_strides, lhs_batch);
  const std::vector<int64_t> batch_r = Offsets(rhs_dims, rhs_strides, rhs_batch);
  const std::vector<int64_t> free_l = Offsets(lhs_dims, lhs_strides, lhs_free);
  const std::vector<int64_t> free_r = Offsets(rhs_dims, rhs_strides, rhs_free);
  const std::vector<int64_t> sum_l = Offsets(lhs_dims, lhs_strides, lhs_contracting);
  const std::vector<int64_t> sum_r = Offsets(rhs_dims, rhs_strides, rhs_contracting);

  dsl::Array out = NewArray(ResultDType(in.instruction), in.instruction.shape.dimensions);
  if (out.size() != static_cast<int64_t>(batch_l.size() * free_l.size() * free_r.size()))
    Fail(in.instruction, "its result shape is not (batch, lhs free, rhs free)");
  if (IsFloat(lhs.dtype()) != IsFloat(rhs.dtype()))
    Fail(in.instruction, "it mixes integer and floating-point operands");

  int64_t flat = 0;
  if (!IsFloat(lhs.dtype())) {
    for (size_t batch = 0; batch < batch_l.size(); ++batch)
      for (size_t m = 0; m < free_l.size(); ++m)
        for (size_t n = 0; n < free_r.size(); ++n) {
          const int64_t left = batch_l[batch] + free_l[m], right = batch_r[batch] + free_r[n];
          uint64_t sum = 0;  // wraps like the integer types
          for (size_t k = 0; k < sum_l.size(); ++k) {
            sum += static_cast<uint64_t>(GetInt(lhs, left + sum_l[k])) *
                   static_cast<uint64_t>(GetInt(rhs, right + sum_r[k]));
          }
          SetInt(out, flat++, static_cast<int64_t>(sum));
        }
    return Value::Of(std::move(out));
  }

  const bool one_pass = OnePassBf16(in);
  const std::vector<double> a = RealValues(lhs, one_pass && lhs.dtype() == dsl::DType::kF32);
  const std::vector<double> b = RealValues(rhs, one_pass && rhs.dtype() == dsl::DType::kF32);
  // Products of bf16 or f16 values are exact in f32; such dots accumulate in f32. Each batch
  // is one matrix product by Eigen (in f32 or in double), on operands gathered contiguously.
  const bool f32_accumulation =
      one_pass || (lhs.dtype() != dsl::DType::kF32 && rhs.dtype() != dsl::DType::kF32);
  const auto rows = static_cast<Eigen::Index>(free_l.size());
  const auto cols = static_cast<Eigen::Index>(free_r.size());
  const auto depth = static_cast<Eigen::Index>(sum_l.size());
  for (size_t batch = 0; batch < batch_l.size(); ++batch) {
    Eigen::MatrixXd left(rows, depth), right(depth, cols);
    for (Eigen::Index m = 0; m < rows; ++m)
      for (Eigen::Index k = 0; k < depth; ++k)
        left(m, k) = a[static_cast<size_t>(batch_l[batch] + free_l[m] + sum_l[k])];
    for (Eigen::Index k = 0; k < depth; ++k)
      for (Eigen::Index n = 0; n < cols; ++n)
        right(k, n) = b[static_cast<size_t>(batch_r[batch] + free_r[n] + sum_r[k])];
    Eigen::MatrixXd product;
    if (f32_accumulation) {
      product = (left.cast<float>() * right.cast<float>()).cast<double>();
    } else {
      product = left * right;
    }
    for (Eigen::Index m = 0; m < rows; ++m)
      for (Eigen::Index n = 0; n < cols; ++n)
        SetReal(out, flat++, product(m, n));
  }
  return Value::Of(std::move(out));
}

}  // namespace

void AddDotOps(OpTable& table) {
  table["dot"] = DotOp;
}

}  // namespace tpusim::hlo::reference
