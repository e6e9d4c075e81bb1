// The kernel's compute ops: MXU matmuls and VPU elementwise work on VMEM refs. Numerics
// run on the host with Eigen (f32 accumulation, bf16 rounding to nearest even); time is
// charged to the chip's MXU or VPU from the shapes.

#include <Eigen/Core>
#include <algorithm>
#include <cstring>

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
  const auto& chip = mesh().topology().chip();
  const int64_t size = chip.mxu_size();
  // One pass: an [8, size] by [size, size] product, 8 cycles on one MXU.
  const int64_t passes = CeilDiv(m, 8) * CeilDiv(k, size) * CeilDiv(n, size);
  return static_cast<uint64_t>(CeilDiv(passes, chip.mxu_count()) * 8);
}

uint64_t Kernel::VpuCycles(int64_t elements, DType dtype) const {
  const auto& chip = mesh().topology().chip();
  // A vreg holds sublanes x lanes 32-bit values; bf16 packs two per 32 bits.
  const int64_t per_vreg =
      static_cast<int64_t>(chip.vpu_sublanes()) * chip.vpu_lanes() * (SizeOf(dtype) == 2 ? 2 : 1);
  constexpr int64_t kLatency = 2;
  return static_cast<uint64_t>(CeilDiv(elements, per_vreg) + kLatency);
}

void Kernel::dot(const Ref& a, const Ref& b, const Ref& acc, bool accumulate) {
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
  if (acc.dtype() != DType::kF32) {
    throw Error(ErrorKind::kKernelMisuse, "dot accumulates in f32, but '" + acc.Describe() +
                                              "' is " + DTypeName(acc.dtype()) +
                                              "; give it an f32 VMEM accumulator.");
  }
  for (const Ref* r : {&a, &b}) {
    if (r->dtype() != DType::kBF16 && r->dtype() != DType::kF32) {
      throw Error(ErrorKind::kKernelMisuse, "dot takes bf16 or f32 inputs, but '" + r->Describe() +
                                                "' is " + DTypeName(r->dtype()) +
                                                "; cast it first.");
    }
  }
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  Array result;
  if (port_.functional()) {
    Matrix product = ToMatrix(Read(*this, a, "dot")) * ToMatrix(Read(*this, b, "dot"));
    if (accumulate) product += ToMatrix(Read(*this, acc, "dot"));
    result = Array(acc.shape(), DType::kF32);
    FromMatrix(product, result);
  }
  port_.Compute(sim::ComputeUnit::kMxu, MxuCycles(m, k, n),
                "dot " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
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
    FromMatrix(ToMatrix(Read(*this, in, "cast")), result);
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
