// The array ops of a program (jax.lax / jax.numpy names): shape functions that check
// operands the way JAX does (no implicit broadcasting or promotion), host numerics with
// Eigen in functional mode (a dot's numerics are the MXU's: dsl/mxu_numerics.h), and XLA's
// fused-op time (dsl/cost.h) on the chip's MXU (dot) or VPU (everything else).

#include <Eigen/Core>
#include <algorithm>

#include "dsl/cost.h"
#include "dsl/mxu_numerics.h"
#include "dsl/program/context.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

Eigen::ArrayXd ToEigen(const Array& a) {
  Eigen::ArrayXd v(a.size());
  for (int64_t i = 0; i < a.size(); ++i)
    v[i] = a.GetFlat(i);
  return v;
}

Array FromEigen(const Eigen::ArrayXd& v, const Shape& shape, DType dtype) {
  Array out(shape, dtype);
  for (int64_t i = 0; i < out.size(); ++i)
    out.SetFlat(i, v[i]);
  return out;
}

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

const config::ChipConfig& Chip(const ProgramContext& ctx) {
  return ctx.mesh().topology().chip();
}

// A memory-bound fused op: reads its operands, writes its results.
void ChargeMemoryOp(OpRun& r, const std::string& what) {
  double bytes = 0;
  for (const Value& v : r.operands)
    bytes += static_cast<double>(v.nbytes());
  for (const Value& v : r.results)
    bytes += static_cast<double>(v.nbytes());
  r.ctx.Charge(base::ComputeUnit::kVpu, XlaElementwiseSeconds(Chip(r.ctx), bytes), what);
}

std::vector<ShapeDtype> SameTypes(const OpTyping& t) {
  const ShapeDtype& a = t.operands[0];
  const ShapeDtype& b = t.operands[1];
  if (a.shape != b.shape || a.dtype != b.dtype) {
    ThrowOpError(t.op, "the operands are " + Type(a) + " and " + Type(b) +
                           ", but an elementwise op needs one shape and one dtype (no "
                           "broadcasting or promotion); reshape or astype one of them.");
  }
  return {a};
}

OpDef Elementwise(const std::string& name, const std::string& summary,
                  double (*op)(double, double)) {
  OpDef def;
  def.name = name;
  def.summary = summary;
  def.min_operands = def.max_operands = 2;
  def.shape = SameTypes;
  def.run = [name, op](OpRun& r) {
    if (r.ctx.functional()) {
      const Eigen::ArrayXd a = ToEigen(r.ctx.Read(r.operands[0]));
      const Eigen::ArrayXd b = ToEigen(r.ctx.Read(r.operands[1]));
      const Eigen::ArrayXd out = a.binaryExpr(b, op);
      r.ctx.Write(r.results[0], FromEigen(out, r.results[0].shape(), r.results[0].dtype()));
    }
    ChargeMemoryOp(r, name);
  };
  return def;
}

OpDef Dot() {
  OpDef def;
  def.name = "dot";
  def.summary = "a [M, K] @ b [K, N] on the MXU, f32 accumulation (lax.dot)";
  def.min_operands = def.max_operands = 2;
  def.attributes = {
      {"preferred_element_type", AttrType::kDType, std::nullopt,
       "the result's dtype; default: the operands' dtype", true},
      {"precision", AttrType::kPrecision, Attr(Precision::kDefault),
       "bf16 MXU passes for f32 operands: DEFAULT 1, HIGH 3, HIGHEST 6"},
  };
  def.shape = [](const OpTyping& t) -> std::vector<ShapeDtype> {
    const ShapeDtype& a = t.operands[0];
    const ShapeDtype& b = t.operands[1];
    if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0]) {
      ThrowOpError(t.op, "needs a [M, K] and b [K, N], but got " + Type(a) + " and " + Type(b) +
                             "; the contracting dimensions must match.");
    }
    if (a.dtype != b.dtype) {
      ThrowOpError(t.op, "the operands are " + Type(a) + " and " + Type(b) +
                             "; give both one dtype (astype one of them).");
    }
    auto it = t.attrs.find("preferred_element_type");
    const DType out = it == t.attrs.end() ? a.dtype : it->second.AsDType();
    return {ShapeDtype{{a.shape[0], b.shape[1]}, out}};
  };
  def.run = [](OpRun& r) {
    const Value& a = r.operands[0];
    const Value& b = r.operands[1];
    const Value& out = r.results[0];
    const Precision precision = r.attrs.at("precision").AsPrecision();
    if (r.ctx.functional()) {
      r.ctx.Write(out, MxuMatmul(r.ctx.Read(a), r.ctx.Read(b), a.dtype(), precision, out.dtype()));
    }
    const double flops = 2.0 * static_cast<double>(a.shape()[0]) *
                         static_cast<double>(a.shape()[1]) * static_cast<double>(b.shape()[1]);
    const double bytes = static_cast<double>(a.nbytes() + b.nbytes() + out.nbytes());
    r.ctx.Charge(base::ComputeUnit::kMxu,
                 XlaOpSeconds(Chip(r.ctx), flops, a.dtype(), precision, bytes), "dot");
  };
  return def;
}

OpDef Relu() {
  OpDef def;
  def.name = "relu";
  def.summary = "max(x, 0) (jax.nn.relu)";
  def.shape = [](const OpTyping& t) { return std::vector<ShapeDtype>{t.operands[0]}; };
  def.run = [](OpRun& r) {
    if (r.ctx.functional()) {
      const Eigen::ArrayXd x = ToEigen(r.ctx.Read(r.operands[0]));
      r.ctx.Write(r.results[0], FromEigen(x.max(0.0), r.results[0].shape(), r.results[0].dtype()));
    }
    ChargeMemoryOp(r, "relu");
  };
  return def;
}

OpDef Astype() {
  OpDef def;
  def.name = "astype";
  def.summary = "x converted to dtype (bf16 rounds to nearest even)";
  def.attributes = {{"dtype", AttrType::kDType, std::nullopt, "the result's dtype"}};
  def.shape = [](const OpTyping& t) {
    return std::vector<ShapeDtype>{{t.operands[0].shape, t.attrs.at("dtype").AsDType()}};
  };
  def.run = [](OpRun& r) {
    if (r.ctx.functional()) {
      r.ctx.Write(r.results[0], FromEigen(ToEigen(r.ctx.Read(r.operands[0])), r.results[0].shape(),
                                          r.results[0].dtype()));
    }
    ChargeMemoryOp(r, "astype");
  };
  return def;
}

// JAX clamps each start so the slice lies inside the operand.
Shape ClampedStarts(const Shape& operand, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& sizes) {
  Shape clamped(starts.size());
  for (size_t d = 0; d < starts.size(); ++d)
    clamped[d] = std::clamp<int64_t>(starts[d], 0, operand[d] - sizes[d]);
  return clamped;
}

OpDef DynamicSlice() {
  OpDef def;
  def.name = "dynamic_slice";
  def.summary = "the box [start, start + size) of x; starts may depend on axis_index";
  def.attributes = {
      {"start_indices", AttrType::kInts, std::nullopt, "one start per dimension (clamped)"},
      {"slice_sizes", AttrType::kInts, std::nullopt, "one size per dimension"},
  };
  def.shape = [](const OpTyping& t) {
    const ShapeDtype& x = t.operands[0];
    const auto& starts = t.attrs.at("start_indices").AsInts();
    const auto& sizes = t.attrs.at("slice_sizes").AsInts();
    if (starts.size() != x.shape.size() || sizes.size() != x.shape.size()) {
      ThrowOpError(t.op, "x is " + Type(x) + " (rank " + std::to_string(x.shape.size()) +
                             ") but start_indices has " + std::to_string(starts.size()) +
                             " entries and slice_sizes " + std::to_string(sizes.size()) +
                             "; give one per dimension.");
    }
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] < 0 || sizes[d] > x.shape[d]) {
        ThrowOpError(t.op, "slice_sizes[" + std::to_string(d) + "] = " + std::to_string(sizes[d]) +
                               " does not fit dimension " + std::to_string(d) + " of " + Type(x) +
                               "; use a size from 0 to " + std::to_string(x.shape[d]) + ".");
      }
    }
    return std::vector<ShapeDtype>{{Shape(sizes.begin(), sizes.end()), x.dtype}};
  };
  def.run = [](OpRun& r) {
    if (r.ctx.functional()) {
      const Array x = r.ctx.Read(r.operands[0]);
      const auto& sizes = r.attrs.at("slice_sizes").AsInts();
      r.ctx.Write(r.results[0],
                  x.Slice(ClampedStarts(x.shape(), r.attrs.at("start_indices").AsInts(), sizes),
                          Shape(sizes.begin(), sizes.end())));
    }
    // A copy of the slice: read it, write it.
    r.ctx.Charge(
        base::ComputeUnit::kVpu,
        XlaElementwiseSeconds(Chip(r.ctx), 2.0 * static_cast<double>(r.results[0].nbytes())),
        "dynamic_slice");
  };
  return def;
}

OpDef Concatenate() {
  OpDef def;
  def.name = "concatenate";
  def.summary = "the operands joined along `dimension` (lax.concatenate)";
  def.max_operands = -1;
  def.attributes = {{"dimension", AttrType::kInt, std::nullopt, "the dimension to join along"}};
  def.shape = [](const OpTyping& t) {
    const ShapeDtype& first = t.operands[0];
    const int64_t dim = t.attrs.at("dimension").AsInt();
    if (dim < 0 || dim >= static_cast<int64_t>(first.shape.size())) {
      ThrowOpError(t.op, "dimension " + std::to_string(dim) + " is outside operand 0, " +
                             Type(first) + "; use 0 to " +
                             std::to_string(static_cast<int64_t>(first.shape.size()) - 1) + ".");
    }
    ShapeDtype out = first;
    out.shape[dim] = 0;
    for (size_t i = 0; i < t.operands.size(); ++i) {
      const ShapeDtype& x = t.operands[i];
      Shape a = x.shape, b = first.shape;
      if (a.size() == b.size()) a[dim] = b[dim] = 0;
      if (a != b || x.dtype != first.dtype) {
        ThrowOpError(t.op, "operand " + std::to_string(i) + " is " + Type(x) +
                               " but operand 0 is " + Type(first) +
                               "; all operands need one dtype and the same "
                               "dimensions except dimension " +
                               std::to_string(dim) + ".");
      }
      out.shape[dim] += x.shape[dim];
    }
    return std::vector<ShapeDtype>{out};
  };
  def.run = [](OpRun& r) {
    if (r.ctx.functional()) {
      Array out(r.results[0].shape(), r.results[0].dtype());
      const auto dim = static_cast<size_t>(r.attrs.at("dimension").AsInt());
      Shape offsets(out.shape().size(), 0);
      for (const Value& v : r.operands) {
        out.Place(r.ctx.Read(v), offsets);
        offsets[dim] += v.shape()[dim];
      }
      r.ctx.Write(r.results[0], out);
    }
    ChargeMemoryOp(r, "concatenate");
  };
  return def;
}

OpDef Zeros() {
  OpDef def;
  def.name = "zeros";
  def.summary = "a new array of zeros (jnp.zeros)";
  def.min_operands = def.max_operands = 0;
  def.attributes = {{"shape", AttrType::kInts, std::nullopt, "the array's shape"},
                    {"dtype", AttrType::kDType, std::nullopt, "the array's dtype"}};
  def.shape = [](const OpTyping& t) {
    const auto& shape = t.attrs.at("shape").AsInts();
    for (int64_t n : shape) {
      if (n < 0) ThrowOpError(t.op, "shape " + ShapeString(shape) + " has a negative dimension.");
    }
    return std::vector<ShapeDtype>{
        {Shape(shape.begin(), shape.end()), t.attrs.at("dtype").AsDType()}};
  };
  def.run = [](OpRun& r) {
    if (r.ctx.functional())
      r.ctx.Write(r.results[0], Array(r.results[0].shape(), r.results[0].dtype()));
    ChargeMemoryOp(r, "zeros");
  };
  return def;
}

}  // namespace

void RegisterArrayOps(OpRegistry& registry) {
  registry.Add(Dot());
  OpDef matmul = Dot();
  matmul.name = "matmul";
  matmul.summary = "the same as dot (jnp.matmul of 2-D arrays)";
  registry.Add(std::move(matmul));
  registry.Add(Elementwise("add", "a + b, elementwise", [](double a, double b) { return a + b; }));
  registry.Add(
      Elementwise("multiply", "a * b, elementwise", [](double a, double b) { return a * b; }));
  registry.Add(Elementwise("max", "max(a, b), elementwise (jnp.maximum)",
                           [](double a, double b) { return a > b ? a : b; }));
  registry.Add(Relu());
  registry.Add(Astype());
  registry.Add(DynamicSlice());
  registry.Add(Concatenate());
  registry.Add(Zeros());
}

}  // namespace tpusim::dsl
