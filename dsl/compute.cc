// The kernel's compute ops: MXU matmuls and VPU elementwise work on VMEM refs. Numerics
// run on the host with Eigen (f32 accumulation, bf16 rounding to nearest even, exact
// integer dots); each op describes its work to the core (base/work.h), and the model's compute
// model times it.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/core_port.h"
#include "base/errors.h"
#include "base/text.h"
#include "dsl/kernel.h"
#include "dsl/mxu_numerics.h"
#include "topologies/topology.pb.h"

namespace tpusim::dsl {

namespace {

using Matrix = HostMatrix;

// Vectors (rank 1) are one row.
Matrix ToMatrix(const Array& a) {
  const bool matrix = a.shape().size() == 2;
  return ToHostMatrix(a, matrix ? a.shape()[0] : 1, matrix ? a.shape()[1] : a.size());
}

// A compute op's read or write of a VMEM/SMEM ref, named after the op for race reports.
Array Read(Kernel& k, const Ref& ref, const std::string& op) {
  return k.ReadLocal(ref, op + " reading '" + ref.Describe() + "'");
}
void Write(Kernel& k, const Ref& ref, const Array& value, const std::string& op) {
  k.port().Store(k.Resolve(ref, k.device_id()), value.data(),
                 op + " writing '" + ref.Describe() + "'");
}

// One elementwise instruction over `out`'s elements of `dtype`.
base::VectorOp VectorWork(const Ref& out, DType dtype) {
  return base::VectorOp{static_cast<uint64_t>(out.size()), static_cast<uint32_t>(SizeOf(dtype))};
}

bool IsInteger(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kInt32;
}

// The dtype a dot runs in: mixed floats promote to f32, mixed integers to int32.
DType PromotedOperands(DType a, DType b) {
  if (a == b) return a;
  return IsInteger(a) ? DType::kInt32 : DType::kF32;
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
  if (port_.functional()) {
    const Array accumulator = accumulate ? Read(*this, acc, "dot") : Array();
    result = MxuMatmul(Read(*this, a, "dot"), Read(*this, b, "dot"), operands, precision,
                       acc.dtype(), accumulate ? &accumulator : nullptr);
  }
  std::string what = "dot " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  if (operands != DType::kBF16) what += std::string(" ") + DTypeName(operands);
  if (operands == DType::kF32) what += std::string(" ") + PrecisionName(precision);
  port_.Execute(base::KernelDot{m, k, n, MxuInputOf(operands), precision}, what);
  if (port_.functional()) Write(*this, acc, result, "dot");
}

void Kernel::ElementwiseOp(Elementwise op, const Ref& out, const Ref& a, const Ref& b) {
  static const char* kNames[] = {"add", "multiply", "maximum", "minimum"};
  const char* name = kNames[static_cast<int>(op)];
  // The verb is built only for the error: a ring reduction adds once per step and chunk.
  for (const Ref* r : {&out, &a, &b}) {
    const MemorySpace space = r->memory_space();
    if (space != MemorySpace::kVmem && space != MemorySpace::kSmem)
      CheckLocalAccess(*r, (std::string("an ") + name + " operand").c_str());
  }
  const auto same_shape = [&out](const Ref& r) {
    return std::equal(r.dims().begin(), r.dims().end(), out.dims().begin(), out.dims().end());
  };
  if (!same_shape(a) || !same_shape(b)) {
    throw Error(ErrorKind::kKernelMisuse,
                std::string(name) + " needs operands of one shape, but got '" + out.Describe() +
                    "' " + ShapeString(out.shape()) + ", '" + a.Describe() + "' " +
                    ShapeString(a.shape()) + " and '" + b.Describe() + "' " +
                    ShapeString(b.shape()) + ".");
  }
  Array result;
  if (port_.functional() && IsInteger(out.dtype()) && IsInteger(a.dtype()) &&
      IsInteger(b.dtype())) {
    // Exactly, wrapping to out's width as the VPU's integer ops do: through f32 an int32
    // partial sum above 2^24 would round.
    const Array x = Read(*this, a, name), y = Read(*this, b, name);
    result = Array(out.shape(), out.dtype());
    for (int64_t i = 0, elements = result.size(); i < elements; ++i) {
      const int64_t u = static_cast<int64_t>(x.GetFlat(i)), v = static_cast<int64_t>(y.GetFlat(i));
      int64_t z = 0;
      switch (op) {
        case Elementwise::kAdd:
          z = u + v;
          break;
        case Elementwise::kMultiply:
          z = static_cast<int64_t>(static_cast<uint64_t>(u) * static_cast<uint64_t>(v));
          break;
        case Elementwise::kMaximum:
          z = std::max(u, v);
          break;
        case Elementwise::kMinimum:
          z = std::min(u, v);
          break;
      }
      const uint64_t bits = static_cast<uint64_t>(z);
      result.SetFlat(i,
                     out.dtype() == DType::kInt8
                         ? static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(bits)))
                         : static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(bits))));
    }
  } else if (port_.functional()) {
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
      case Elementwise::kMinimum:
        z = x.cwiseMin(y);
        break;
    }
    result = Array(out.shape(), out.dtype());
    FromHostMatrix(z, result);
  }
  port_.Execute(VectorWork(out, out.dtype()), name);
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
void Kernel::minimum(const Ref& out, const Ref& a, const Ref& b) {
  ElementwiseOp(Elementwise::kMinimum, out, a, b);
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
      for (int64_t i = 0, elements = value.size(); i < elements; ++i)
        result.SetFlat(i, value.GetFlat(i));
    } else {
      FromHostMatrix(ToMatrix(value), result);
    }
  }
  port_.Execute(VectorWork(out, in.dtype()), "cast");
  if (port_.functional()) Write(*this, out, result, "cast");
}

void Kernel::fill(const Ref& out, double value) {
  CheckLocalAccess(out, "a fill");
  if (IsInteger(out.dtype())) {
    // The cast to the integer is undefined outside its range (NaN, inf, 1e300 all stored
    // INT_MIN): refuse such values, in timing-only runs too.
    const double lo = out.dtype() == DType::kInt8 ? -128.0 : -2147483648.0;
    const double hi = out.dtype() == DType::kInt8 ? 127.0 : 2147483647.0;
    if (!(std::trunc(value) >= lo && std::trunc(value) <= hi)) {
      const char* name = DTypeName(out.dtype());
      throw Error(ErrorKind::kKernelMisuse,
                  "a fill of '" + out.Describe() + "' (" + name + ") with " +
                      base::NumberText(value) + ": an " + name + " holds whole numbers from " +
                      base::NumberText(lo) + " to " + base::NumberText(hi) +
                      "; give a value in that range (a fraction truncates toward zero).");
    }
  }
  Array result;
  if (port_.functional()) {
    result = Array(out.shape(), out.dtype());
    for (int64_t i = 0, elements = result.size(); i < elements; ++i)
      result.SetFlat(i, value);
  }
  port_.Execute(VectorWork(out, out.dtype()), "fill");
  if (port_.functional()) Write(*this, out, result, "fill");
}

}  // namespace tpusim::dsl
