// The kernel's compute ops: MXU matmuls and VPU elementwise work on VMEM refs. Numerics
// run on the host with Eigen (f32 accumulation, bf16 rounding to nearest even, exact
// integer dots); time is charged to the chip's MXU or VPU from dsl/cost.h.

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <vector>

#include "dsl/cost.h"
#include "dsl/kernel.h"
#include "sim/core_port.h"
#include "sim/errors.h"
#include "topologies/topology.pb.h"

namespace tpusim::dsl {

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

Matrix ToMatrix(const Array& a) {
  const int64_t rows = a.shape().size() == 2 ? a.shape()[0] : 1;
  const int64_t cols = a.shape().size() == 2 ? a.shape()[1] : a.size();
  Matrix m(rows, cols);
  if (a.dtype() == DType::kF32) {
    std::memcpy(m.data(), a.data(), a.nbytes());
  } else if (a.dtype() == DType::kBF16) {
    const auto* p = reinterpret_cast<const bf16*>(a.data());
    for (int64_t i = 0; i < a.size(); ++i)
      m.data()[i] = static_cast<float>(p[i]);
  } else {
    for (int64_t i = 0; i < a.size(); ++i)
      m.data()[i] = static_cast<float>(a.GetFlat(i));
  }
  return m;
}

void FromMatrix(const Matrix& m, Array& out) {
  if (out.dtype() == DType::kF32) {
    std::memcpy(out.data(), m.data(), out.nbytes());
  } else if (out.dtype() == DType::kBF16) {
    auto* p = reinterpret_cast<bf16*>(out.data());
    for (int64_t i = 0; i < out.size(); ++i)
      p[i] = bf16(m.data()[i]);
  } else {
    for (int64_t i = 0; i < out.size(); ++i)
      out.SetFlat(i, m.data()[i]);
  }
}

// A compute op's read or write of a VMEM/SMEM ref, named after the op for race reports.
Array Read(Kernel& k, const Ref& ref, const std::string& op) {
  Array out(ref.shape(), ref.dtype());
  k.port().Load(k.Resolve(ref, k.device_id()), out.data(),
                op + " reading '" + ref.Describe() + "'");
  return out;
}
void Write(Kernel& k, const Ref& ref, const Array& value, const std::string& op) {
  k.port().Store(k.Resolve(ref, k.device_id()), value.data(),
                 op + " writing '" + ref.Describe() + "'");
}

}  // namespace

uint64_t Kernel::MxuCycles(int64_t m, int64_t k, int64_t n) const {
  return MxuDotCycles(mesh().topology().chip(), m, k, n, DType::kBF16, Precision::kDefault);
}

uint64_t Kernel::VpuCycles(int64_t elements, DType dtype) const {
  const auto& chip = mesh().topology().chip();
  // A vreg holds sublanes x lanes 32-bit values; bf16 packs two per 32 bits.
  const int64_t per_vreg =
      static_cast<int64_t>(chip.vpu_sublanes()) * chip.vpu_lanes() * (SizeOf(dtype) == 2 ? 2 : 1);
  constexpr int64_t kLatency = 2;
  return static_cast<uint64_t>(CeilDiv(elements, per_vreg) + kLatency);
}

namespace {

bool IsInteger(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kInt32;
}

// The dtype a dot runs in: mixed floats promote to f32, mixed integers to int32.
DType PromotedOperands(DType a, DType b) {
  if (a == b) return a;
  return IsInteger(a) ? DType::kInt32 : DType::kF32;
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

// The MXU's float product: bf16 x bf16 products accumulated in f32, as many as the
// precision's passes (docs/references.md §1). The small terms are summed first, as XLA does.
Matrix FloatProduct(const Matrix& a, const Matrix& b, Precision precision) {
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

// Integer dots accumulate exactly, modulo 2^32 as int32 hardware wraps: unsigned 64-bit
// arithmetic is exact modulo 2^64, so its low 32 bits are the int32 result.
using IntMatrix = Eigen::Matrix<uint64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

IntMatrix ToIntMatrix(const Array& a) {
  IntMatrix m(a.shape()[0], a.shape()[1]);
  for (int64_t i = 0; i < a.size(); ++i)
    m.data()[i] = static_cast<uint64_t>(static_cast<int64_t>(a.GetFlat(i)));
  return m;
}

Array FromIntMatrix(const IntMatrix& m) {
  Array out({m.rows(), m.cols()}, DType::kInt32);
  auto* p = reinterpret_cast<int32_t*>(out.data());
  for (int64_t i = 0; i < out.size(); ++i)
    p[i] = static_cast<int32_t>(static_cast<uint32_t>(m.data()[i]));
  return out;
}

}  // namespace

void Kernel::dot(const Ref& a, const Ref& b, const Ref& acc, bool accumulate, Precision precision,
                 std::optional<DType> preferred_element_type) {
  for (const Ref* r : {&a, &b, &acc})
    CheckLocalAccess(*r, "a dot operand");
  if (a.shape().size() != 2 || b.shape().size() != 2 || acc.shape().size() != 2 ||
      a.shape()[1] != b.shape()[0] || acc.shape()[0] != a.shape()[0] ||
      acc.shape()[1] != b.shape()[1]) {
    throw Error(ErrorKind::kKernelMisuse,
                "dot needs a [M, K], b [K, N] and acc [M, N], but got '" + a.Describe() + "' " +
                    ShapeString(a.shape()) + ", '" + b.Describe() + "' " + ShapeString(b.shape()) +
                    " and '" + acc.Describe() + "' " + ShapeString(acc.shape()) + ".");
  }
  if (IsInteger(a.dtype()) != IsInteger(b.dtype())) {
    throw Error(ErrorKind::kKernelMisuse,
                "dot takes two float (bf16, f32) or two integer (int8, int32) operands, but '" +
                    a.Describe() + "' is " + DTypeName(a.dtype()) + " and '" + b.Describe() +
                    "' is " + DTypeName(b.dtype()) + "; cast one of them first.");
  }
  const DType operands = PromotedOperands(a.dtype(), b.dtype());
  const bool integer = IsInteger(operands);
  if (preferred_element_type && *preferred_element_type != acc.dtype()) {
    throw Error(ErrorKind::kKernelMisuse, std::string("dot was asked for preferred_element_type ") +
                                              DTypeName(*preferred_element_type) +
                                              ", but its accumulator '" + acc.Describe() + "' is " +
                                              DTypeName(acc.dtype()) +
                                              "; give an accumulator of the preferred type.");
  }
  const bool acc_fits = integer ? acc.dtype() == DType::kInt32
                                : (acc.dtype() == DType::kF32 || acc.dtype() == DType::kBF16);
  if (!acc_fits) {
    throw Error(ErrorKind::kKernelMisuse,
                std::string("dot of ") + DTypeName(operands) + " operands " +
                    (integer ? "accumulates in int32" : "accumulates in f32 (or bf16)") +
                    ", but '" + acc.Describe() + "' is " + DTypeName(acc.dtype()) + "; give it " +
                    (integer ? "an int32" : "an f32") + " VMEM accumulator.");
  }
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  Array result;
  if (port_.functional() && integer) {
    IntMatrix product = ToIntMatrix(Read(*this, a, "dot")) * ToIntMatrix(Read(*this, b, "dot"));
    if (accumulate) product += ToIntMatrix(Read(*this, acc, "dot"));
    result = FromIntMatrix(product);
  } else if (port_.functional()) {
    Matrix product = operands == DType::kBF16
                         ? Matrix(ToMatrix(Read(*this, a, "dot")) * ToMatrix(Read(*this, b, "dot")))
                         : FloatProduct(ToMatrix(Read(*this, a, "dot")),
                                        ToMatrix(Read(*this, b, "dot")), precision);
    if (accumulate) product += ToMatrix(Read(*this, acc, "dot"));
    result = Array(acc.shape(), acc.dtype());
    FromMatrix(product, result);
  }
  std::string what = "dot " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  if (operands != DType::kBF16) what += std::string(" ") + DTypeName(operands);
  if (operands == DType::kF32) what += std::string(" ") + PrecisionName(precision);
  port_.Compute(sim::ComputeUnit::kMxu,
                MxuDotCycles(mesh().topology().chip(), m, k, n, operands, precision), what);
  if (port_.functional()) Write(*this, acc, result, "dot");
}

void Kernel::ElementwiseOp(Elementwise op, const Ref& out, const Ref& a, const Ref& b) {
  static const char* kNames[] = {"add", "multiply", "maximum"};
  const char* name = kNames[static_cast<int>(op)];
  for (const Ref* r : {&out, &a, &b})
    CheckLocalAccess(*r, (std::string("an ") + name + " operand").c_str());
  if (a.shape() != out.shape() || b.shape() != out.shape()) {
    throw Error(ErrorKind::kKernelMisuse,
                std::string(name) + " needs operands of one shape, but got '" + out.Describe() +
                    "' " + ShapeString(out.shape()) + ", '" + a.Describe() + "' " +
                    ShapeString(a.shape()) + " and '" + b.Describe() + "' " +
                    ShapeString(b.shape()) + ".");
  }
  Array result;
  if (port_.functional()) {
    const Matrix x = ToMatrix(Read(*this, a, name)), y = ToMatrix(Read(*this, b, name));
    Matrix z;
    switch (op) {
      case Elementwise::kAdd:
        z = x + y;
        break;
      case Elementwise::kMultiply:
        z = x.cwiseProduct(y);
        break;
      case Elementwise::kMaximum:
        z = x.cwiseMax(y);
        break;
    }
    result = Array(out.shape(), out.dtype());
    FromMatrix(z, result);
  }
  port_.Compute(sim::ComputeUnit::kVpu, VpuCycles(out.size(), out.dtype()), name);
  if (port_.functional()) Write(*this, out, result, name);
}

void Kernel::add(const Ref& out, const Ref& a, const Ref& b) {
  ElementwiseOp(Elementwise::kAdd, out, a, b);
}
void Kernel::multiply(const Ref& out, const Ref& a, const Ref& b) {
  ElementwiseOp(Elementwise::kMultiply, out, a, b);
}
void Kernel::maximum(const Ref& out, const Ref& a, const Ref& b) {
  ElementwiseOp(Elementwise::kMaximum, out, a, b);
}

void Kernel::cast(const Ref& out, const Ref& in) {
  CheckLocalAccess(out, "a cast's output");
  CheckLocalAccess(in, "a cast's input");
  if (out.shape() != in.shape()) {
    throw Error(ErrorKind::kKernelMisuse, "cast needs one shape, but '" + in.Describe() + "' is " +
                                              ShapeString(in.shape()) + " and '" + out.Describe() +
                                              "' is " + ShapeString(out.shape()) + ".");
  }
  Array result;
  if (port_.functional()) {
    result = Array(out.shape(), out.dtype());
    const Array value = Read(*this, in, "cast");
    if (IsInteger(in.dtype()) && IsInteger(out.dtype())) {
      // Through double, which holds every int32 exactly; f32 would round above 2^24.
      for (int64_t i = 0; i < value.size(); ++i)
        result.SetFlat(i, value.GetFlat(i));
    } else {
      FromMatrix(ToMatrix(value), result);
    }
  }
  port_.Compute(sim::ComputeUnit::kVpu, VpuCycles(out.size(), in.dtype()), "cast");
  if (port_.functional()) Write(*this, out, result, "cast");
}

void Kernel::fill(const Ref& out, double value) {
  CheckLocalAccess(out, "a fill");
  Array result;
  if (port_.functional()) {
    result = Array(out.shape(), out.dtype());
    for (int64_t i = 0; i < result.size(); ++i)
      result.SetFlat(i, value);
  }
  port_.Compute(sim::ComputeUnit::kVpu, VpuCycles(out.size(), out.dtype()), "fill");
  if (port_.functional()) Write(*this, out, result, "fill");
}

}  // namespace tpusim::dsl
