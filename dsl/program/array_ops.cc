// The array ops of a program (jax.lax / jax.numpy names): shape functions that check
// operands the way JAX does (no implicit broadcasting or promotion), host numerics with
// Eigen in functional mode (a dot's numerics are the MXU's: dsl/mxu_numerics.h), and XLA's
// work (an XlaWork: dots, vector operations, HBM bytes read and written), which the model
// times as XLA's compiled op (sim/compute_models.h).

#include <Eigen/Core>
#include <algorithm>

#include "dsl/mxu_numerics.h"
#include "dsl/program/context.h"
#include "dsl/program/dot_attributes.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

// f32 and bf16, the dtypes of almost every program, convert without a call per element.
Eigen::ArrayXd ToEigen(const Array& a) {
  const int64_t elements = a.size();
  Eigen::ArrayXd v(elements);
  if (a.dtype() == DType::kF32) {
    const auto* p = reinterpret_cast<const float*>(a.data());
    for (int64_t i = 0; i < elements; ++i)
      v[i] = p[i];
  } else if (a.dtype() == DType::kBF16) {
    const auto* p = reinterpret_cast<const bf16*>(a.data());
    for (int64_t i = 0; i < elements; ++i)
      v[i] = static_cast<float>(p[i]);
  } else {
    for (int64_t i = 0; i < elements; ++i)
      v[i] = a.GetFlat(i);
  }
  return v;
}

Array FromEigen(const Eigen::ArrayXd& v, const Shape& shape, DType dtype) {
  Array out(shape, dtype);
  const int64_t elements = out.size();
  if (dtype == DType::kF32) {
    auto* p = reinterpret_cast<float*>(out.data());
    for (int64_t i = 0; i < elements; ++i)
      p[i] = static_cast<float>(v[i]);
  } else if (dtype == DType::kBF16) {
    auto* p = reinterpret_cast<bf16*>(out.data());
    for (int64_t i = 0; i < elements; ++i)
      p[i] = bf16(static_cast<float>(v[i]));
  } else {
    for (int64_t i = 0; i < elements; ++i)
      out.SetFlat(i, v[i]);
  }
  return out;
}

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

// A copy or a fill (concatenate, zeros): it moves bytes and computes nothing.
XlaWork CopyWork(const OpTyping& t, const std::vector<ShapeDtype>& results) {
  return ReadWriteWork(t.operands, results);
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
  def.compute = [op](const OpCompute& c) {
    const Eigen::ArrayXd a = ToEigen(c.operands[0]);
    const Eigen::ArrayXd b = ToEigen(c.operands[1]);
    return std::vector<Array>{
        FromEigen(a.binaryExpr(b, op), c.results[0].shape, c.results[0].dtype)};
  };
  def.work = MemoryBoundWork;
  return def;
}

OpDef Dot() {
  OpDef def;
  def.name = "dot";
  def.summary = "a [M, K] @ b [K, N] on the MXU, f32 accumulation (lax.dot)";
  def.min_operands = def.max_operands = 2;
  def.attributes = DotResultAttributes();
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
  def.compute = [](const OpCompute& c) {
    const Array &a = c.operands[0], &b = c.operands[1];
    return std::vector<Array>{
        MxuMatmul(a, b, a.dtype(), c.attrs.at("precision").AsPrecision(), c.results[0].dtype)};
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& results) {
    const ShapeDtype &a = t.operands[0], &b = t.operands[1];
    XlaWork work = ReadWriteWork(t.operands, results);
    work.dots.push_back({2.0 * static_cast<double>(a.shape[0]) * static_cast<double>(a.shape[1]) *
                             static_cast<double>(b.shape[1]),
                         MxuInputOf(a.dtype), t.attrs.at("precision").AsPrecision()});
    return work;
  };
  return def;
}

OpDef Relu() {
  OpDef def;
  def.name = "relu";
  def.summary = "max(x, 0) (jax.nn.relu)";
  def.shape = [](const OpTyping& t) { return std::vector<ShapeDtype>{t.operands[0]}; };
  def.compute = [](const OpCompute& c) {
    return std::vector<Array>{
        FromEigen(ToEigen(c.operands[0]).max(0.0), c.results[0].shape, c.results[0].dtype)};
  };
  def.work = MemoryBoundWork;
  return def;
}

OpDef Astype() {
  OpDef def;
  def.name = "astype";
  def.summary = "x converted to dtype (bf16 rounds to nearest even)";
  def.attributes = {AttrSpec::Of(DTypeAttr("dtype", "the result's dtype"))};
  def.shape = [](const OpTyping& t) {
    return std::vector<ShapeDtype>{{t.operands[0].shape, t.attrs.at("dtype").AsDType()}};
  };
  def.compute = [](const OpCompute& c) {
    return std::vector<Array>{
        FromEigen(ToEigen(c.operands[0]), c.results[0].shape, c.results[0].dtype)};
  };
  def.work = MemoryBoundWork;
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
  def.summary =
      "the box [start, start + size) of x; starts (clamped) from start_indices, which may "
      "depend on axis_index, or from scalar operands after x (XLA's dynamic-slice)";
  def.max_operands = -1;
  def.attributes = {
      AttrSpec::Of(
          base::Param::Ints("start_indices",
                            "one start per dimension (clamped); or pass them as scalar operands")
              .Auto("from the scalar operands after x")),
      AttrSpec::Of(base::Param::Ints("slice_sizes", "one size per dimension")),
  };
  def.shape = [](const OpTyping& t) {
    const ShapeDtype& x = t.operands[0];
    const auto& sizes = t.attrs.at("slice_sizes").AsInts();
    auto given = t.attrs.find("start_indices");
    const size_t scalars = t.operands.size() - 1;
    const size_t starts = given == t.attrs.end() ? scalars : given->second.AsInts().size();
    if ((given == t.attrs.end()) == (scalars == 0)) {
      ThrowOpError(t.op,
                   "give the starts either as start_indices or as scalar operands after x, "
                   "not both or neither.");
    }
    for (size_t i = 1; i < t.operands.size(); ++i) {
      if (!t.operands[i].shape.empty() || IsFloating(t.operands[i].dtype)) {
        ThrowOpError(t.op, "start index operand " + std::to_string(i) + " is " +
                               Type(t.operands[i]) + "; start indices are integer scalars.");
      }
    }
    if (starts != x.shape.size() || sizes.size() != x.shape.size()) {
      ThrowOpError(t.op, "x is " + Type(x) + " (rank " + std::to_string(x.shape.size()) +
                             ") but it has " + std::to_string(starts) +
                             " start indices and slice_sizes " + std::to_string(sizes.size()) +
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
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    const auto& sizes = c.attrs.at("slice_sizes").AsInts();
    std::vector<int64_t> starts;
    if (auto given = c.attrs.find("start_indices"); given != c.attrs.end()) {
      starts = given->second.AsInts();
    } else {
      for (size_t i = 1; i < c.operands.size(); ++i)
        starts.push_back(static_cast<int64_t>(c.operands[i].GetFlat(0)));
    }
    return std::vector<Array>{
        x.Slice(ClampedStarts(x.shape(), starts, sizes), Shape(sizes.begin(), sizes.end()))};
  };
  // A copy of the slice: read it, write it.
  def.work = [](const OpTyping&, const std::vector<ShapeDtype>& results) {
    return ReadWriteWork(results, results);
  };
  return def;
}

OpDef Concatenate() {
  OpDef def;
  def.name = "concatenate";
  def.summary = "the operands joined along `dimension` (lax.concatenate)";
  def.max_operands = -1;
  def.attributes = {AttrSpec::Of(base::Param::Int("dimension", "the dimension to join along"))};
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
  def.compute = [](const OpCompute& c) {
    Array out(c.results[0].shape, c.results[0].dtype);
    const auto dim = static_cast<size_t>(c.attrs.at("dimension").AsInt());
    Shape offsets(out.shape().size(), 0);
    for (const Array& v : c.operands) {
      out.Place(v, offsets);
      offsets[dim] += v.shape()[dim];
    }
    return std::vector<Array>{out};
  };
  def.work = CopyWork;
  return def;
}

OpDef Zeros() {
  OpDef def;
  def.name = "zeros";
  def.summary = "a new array of zeros (jnp.zeros)";
  def.min_operands = def.max_operands = 0;
  def.attributes = {AttrSpec::Of(base::Param::Ints("shape", "the array's shape")),
                    AttrSpec::Of(DTypeAttr("dtype", "the array's dtype"))};
  def.shape = [](const OpTyping& t) {
    const auto& shape = t.attrs.at("shape").AsInts();
    for (int64_t n : shape) {
      if (n < 0) ThrowOpError(t.op, "shape " + ShapeString(shape) + " has a negative dimension.");
    }
    return std::vector<ShapeDtype>{
        {Shape(shape.begin(), shape.end()), t.attrs.at("dtype").AsDType()}};
  };
  def.compute = [](const OpCompute& c) {
    return std::vector<Array>{Array(c.results[0].shape, c.results[0].dtype)};
  };
  def.work = CopyWork;
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
