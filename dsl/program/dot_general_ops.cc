// lax.dot_general (XLA's dot, batch dimensions included) and lax.conv_general_dilated
// charged as the dot it is. dot_general's numerics are the MXU's (dsl/mxu_numerics.h), one
// batch at a time; its work is 2 x batch x M x N x K FLOPs at the operands' MXU passes, and
// its operands and result through HBM once (a fused XLA dot at the roofline).

#include <algorithm>

#include "dsl/mxu_numerics.h"
#include "dsl/program/array_index.h"
#include "dsl/program/dot_attributes.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

// The operand's dimensions that are neither batch nor contracting, in order.
std::vector<int64_t> FreeDims(size_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d) {
    if (std::count(batch.begin(), batch.end(), d) == 0 &&
        std::count(contracting.begin(), contracting.end(), d) == 0)
      free.push_back(d);
  }
  return free;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= shape[d];
  return p;
}

struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  std::vector<int64_t> lhs_free, rhs_free;
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

DotDims DimsOf(const std::string& op, const Attributes& attrs, const ShapeDtype& lhs,
               const ShapeDtype& rhs) {
  DotDims d;
  d.lhs_batch = attrs.at("lhs_batch_dims").AsInts();
  d.rhs_batch = attrs.at("rhs_batch_dims").AsInts();
  d.lhs_contracting = attrs.at("lhs_contracting_dims").AsInts();
  d.rhs_contracting = attrs.at("rhs_contracting_dims").AsInts();
  auto check = [&](const std::vector<int64_t>& dims, const ShapeDtype& t, const char* what) {
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] < 0 || sorted[i] >= static_cast<int64_t>(t.shape.size()) ||
          (i > 0 && sorted[i] == sorted[i - 1])) {
        ThrowOpError(op, std::string(what) + " " + ShapeString(dims) +
                             " names a dimension outside " + Type(t) + ", or one twice.");
      }
    }
  };
  check(d.lhs_batch, lhs, "lhs_batch_dims");
  check(d.rhs_batch, rhs, "rhs_batch_dims");
  check(d.lhs_contracting, lhs, "lhs_contracting_dims");
  check(d.rhs_contracting, rhs, "rhs_contracting_dims");
  if (d.lhs_batch.size() != d.rhs_batch.size() ||
      d.lhs_contracting.size() != d.rhs_contracting.size()) {
    ThrowOpError(op,
                 "lhs and rhs need as many batch dimensions and as many contracting "
                 "dimensions as each other.");
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (lhs.shape[d.lhs_batch[i]] != rhs.shape[d.rhs_batch[i]]) {
      ThrowOpError(op, "batch dimension " + std::to_string(i) + " differs: " + Type(lhs) + " vs " +
                           Type(rhs) + ".");
    }
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (lhs.shape[d.lhs_contracting[i]] != rhs.shape[d.rhs_contracting[i]]) {
      ThrowOpError(op, "contracting dimension " + std::to_string(i) + " differs: " + Type(lhs) +
                           " vs " + Type(rhs) + "; the contracting dimensions must match.");
    }
  }
  d.lhs_free = FreeDims(lhs.shape.size(), d.lhs_batch, d.lhs_contracting);
  d.rhs_free = FreeDims(rhs.shape.size(), d.rhs_batch, d.rhs_contracting);
  d.batch = Product(lhs.shape, d.lhs_batch);
  d.m = Product(lhs.shape, d.lhs_free);
  d.n = Product(rhs.shape, d.rhs_free);
  d.k = Product(lhs.shape, d.lhs_contracting);
  return d;
}

// The operand's elements in the order of `dims` (a transpose), flattened.
Array Permuted(const Array& x, const std::vector<int64_t>& dims) {
  Shape shape;
  for (int64_t d : dims)
    shape.push_back(x.shape()[d]);
  const Shape strides = RowMajorStrides(x.shape());
  Array out(shape, x.dtype());
  Shape index;
  for (int64_t i = 0; i < out.size(); ++i) {
    Unflatten(i, shape, index);
    int64_t from = 0;
    for (size_t j = 0; j < dims.size(); ++j)
      from += index[j] * strides[dims[j]];
    out.SetFlat(i, x.GetFlat(from));
  }
  return out;
}

// Matrix `batch` of a [batches, rows, cols] array.
Array BatchOf(const Array& x, int64_t batch, int64_t rows, int64_t cols) {
  Array out(Shape{rows, cols}, x.dtype());
  const auto begin = x.bytes().begin() + batch * static_cast<int64_t>(out.nbytes());
  std::copy(begin, begin + static_cast<int64_t>(out.nbytes()), out.bytes().begin());
  return out;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c = {}) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

std::vector<AttrSpec> DotAttributes() {
  std::vector<AttrSpec> attributes = {
      AttrSpec::Of(base::Param::Ints("lhs_contracting_dims", "lhs dimensions summed over")),
      AttrSpec::Of(base::Param::Ints("rhs_contracting_dims", "rhs dimensions summed over")),
      AttrSpec::Of(base::Param::Ints("lhs_batch_dims", "lhs batch dimensions")
                       .Default(std::vector<int64_t>{})),
      AttrSpec::Of(base::Param::Ints("rhs_batch_dims", "rhs batch dimensions")
                       .Default(std::vector<int64_t>{})),
  };
  for (AttrSpec& shared : DotResultAttributes())
    attributes.push_back(std::move(shared));
  return attributes;
}

DType ResultDtype(const Attributes& attrs, DType operands) {
  auto it = attrs.find("preferred_element_type");
  return it == attrs.end() ? operands : it->second.AsDType();
}

OpDef DotGeneral() {
  OpDef def;
  def.name = "dot_general";
  def.summary =
      "lax.dot_general: contract lhs with rhs over the given dimensions, batch "
      "dimensions first in the result, then lhs's free, then rhs's free (XLA's dot)";
  def.min_operands = def.max_operands = 2;
  def.attributes = DotAttributes();
  def.shape = [](const OpTyping& t) {
    const ShapeDtype &lhs = t.operands[0], &rhs = t.operands[1];
    if (lhs.dtype != rhs.dtype) {
      ThrowOpError(t.op, "the operands are " + Type(lhs) + " and " + Type(rhs) +
                             "; give both one dtype (convert one of them).");
    }
    const DotDims d = DimsOf(t.op, t.attrs, lhs, rhs);
    Shape shape;
    for (int64_t i : d.lhs_batch)
      shape.push_back(lhs.shape[i]);
    for (int64_t i : d.lhs_free)
      shape.push_back(lhs.shape[i]);
    for (int64_t i : d.rhs_free)
      shape.push_back(rhs.shape[i]);
    return std::vector<ShapeDtype>{{shape, ResultDtype(t.attrs, lhs.dtype)}};
  };
  def.compute = [](const OpCompute& c) {
    const Array &lhs = c.operands[0], &rhs = c.operands[1];
    const DotDims d = DimsOf(c.op, c.attrs, {lhs.shape(), lhs.dtype()}, {rhs.shape(), rhs.dtype()});
    const Array a = Permuted(lhs, Concat(d.lhs_batch, d.lhs_free, d.lhs_contracting));
    const Array b = Permuted(rhs, Concat(d.rhs_batch, d.rhs_contracting, d.rhs_free));
    const Precision precision = c.attrs.at("precision").AsPrecision();
    Array out(c.results[0].shape, c.results[0].dtype);
    for (int64_t batch = 0; batch < d.batch; ++batch) {
      const Array a2 = BatchOf(a, batch, d.m, d.k);
      const Array b2 = BatchOf(b, batch, d.k, d.n);
      const Array product = MxuMatmul(a2, b2, lhs.dtype(), precision, out.dtype());
      std::copy(product.bytes().begin(), product.bytes().end(),
                out.bytes().begin() + batch * static_cast<int64_t>(product.nbytes()));
    }
    return std::vector<Array>{out};
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    const DotDims d = DimsOf(t.op, t.attrs, t.operands[0], t.operands[1]);
    XlaWork work = ReadWriteWork(t.operands, r);
    work.dots.push_back({2.0 * static_cast<double>(d.batch) * static_cast<double>(d.m) *
                             static_cast<double>(d.n) * static_cast<double>(d.k),
                         MxuInputOf(t.operands[0].dtype), t.attrs.at("precision").AsPrecision()});
    return work;
  };
  return def;
}

// XLA's convolution, charged as the dot it is: each output element is a dot product over
// the kernel's window and input features. Its numerics are not modelled (timing-only).
OpDef Convolution() {
  OpDef def;
  def.name = "conv_general_dilated";
  def.summary =
      "a convolution, timed as the dot it is (2 x output elements x window x input "
      "features per group FLOPs); no numerics, so programs using it run timing-only";
  def.min_operands = def.max_operands = 2;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("result_shape", "the output's shape, as XLA printed it")),
      AttrSpec::Of(DTypeAttr("result_dtype", "the output's dtype")),
      AttrSpec::Of(
          base::Param::Int("kernel_output_feature_dim", "the kernel's output-feature dimension")),
      AttrSpec::Of(base::Param::Int("feature_group_count", "groups of input features").Default(1)),
      AttrSpec::Of(PrecisionAttr("precision", "MXU passes for f32").Default("DEFAULT")),
  };
  def.shape = [](const OpTyping& t) {
    const auto& shape = t.attrs.at("result_shape").AsInts();
    const int64_t out_feature = t.attrs.at("kernel_output_feature_dim").AsInt();
    if (out_feature < 0 || out_feature >= static_cast<int64_t>(t.operands[1].shape.size())) {
      ThrowOpError(t.op, "kernel_output_feature_dim " + std::to_string(out_feature) +
                             " is outside the kernel " + Type(t.operands[1]) + ".");
    }
    return std::vector<ShapeDtype>{
        {Shape(shape.begin(), shape.end()), t.attrs.at("result_dtype").AsDType()}};
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    const ShapeDtype& kernel = t.operands[1];
    const int64_t out_feature = t.attrs.at("kernel_output_feature_dim").AsInt();
    // Per output element: the kernel's elements over its output features.
    const double macs = static_cast<double>(NumElements(kernel.shape)) /
                        static_cast<double>(std::max<int64_t>(kernel.shape[out_feature], 1));
    XlaWork work = ReadWriteWork(t.operands, r);
    work.dots.push_back({2.0 * static_cast<double>(NumElements(r[0].shape)) * macs,
                         MxuInputOf(t.operands[0].dtype), t.attrs.at("precision").AsPrecision()});
    return work;
  };
  return def;
}

}  // namespace

std::vector<AttrSpec> DotResultAttributes() {
  return {
      AttrSpec::Of(
          DTypeAttr("preferred_element_type", "the result's dtype; default: the operands' dtype")
              .Auto("the operands' dtype")),
      AttrSpec::Of(PrecisionAttr("precision",
                                 "bf16 MXU passes for f32 operands: DEFAULT 1, HIGH 3, HIGHEST 6")
                       .Default("DEFAULT")),
  };
}

void RegisterDotGeneralOps(OpRegistry& registry) {
  registry.Add(DotGeneral());
  registry.Add(Convolution());
}

}  // namespace tpusim::dsl
