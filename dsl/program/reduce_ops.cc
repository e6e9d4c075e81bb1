// Program ops that apply a computation (XLA's to_apply, comparator): reduce, reduce_window
// and sort. The computation is an attribute (dsl/program/computation.h). A reducer XLA
// recognises (add, max, min, multiply, and, or) runs as a plain loop; any other (argmax's
// variadic reducer, a custom comparator) is evaluated element by element. Their work is
// memory-bound: operands and results through HBM, one VPU operation per input element
// (sort: log2(n) per element).

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dsl/program/array_index.h"
#include "dsl/program/elementwise_numerics.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

Array Scalar(double v, DType dtype) {
  Array a(Shape{}, dtype);
  a.SetFlat(0, v);
  return a;
}

// acc (op) x for a recognised reducer; nullopt for any other computation.
using Combiner = double (*)(double, double);
Combiner CombinerOf(const std::string& reducer) {
  if (reducer == "add") return [](double a, double b) { return a + b; };
  if (reducer == "multiply") return [](double a, double b) { return a * b; };
  if (reducer == "max") return MaxPropagatingNan;
  if (reducer == "min") return MinPropagatingNan;
  if (reducer == "and") return [](double a, double b) { return (a != 0 && b != 0) ? 1.0 : 0.0; };
  if (reducer == "or") return [](double a, double b) { return (a != 0 || b != 0) ? 1.0 : 0.0; };
  return nullptr;
}

// Folds one more set of elements into the accumulators: acc = computation(acc..., x...).
void Fold(const Computation& computation, Combiner combine, std::vector<double>& acc,
          const std::vector<double>& x, const std::vector<DType>& dtypes) {
  if (combine) {
    acc[0] = combine(acc[0], x[0]);
    return;
  }
  std::vector<Array> args;
  for (size_t i = 0; i < acc.size(); ++i)
    args.push_back(Scalar(acc[i], dtypes[i]));
  for (size_t i = 0; i < x.size(); ++i)
    args.push_back(Scalar(x[i], dtypes[i]));
  const std::vector<Array> out = computation.Evaluate(args);
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = out.at(i).GetFlat(0);
}

void CheckReducer(const OpTyping& t, size_t inputs) {
  const Computation& c = t.attrs.at("computation").AsComputation();
  if (c.parameter_types().size() != 2 * inputs || c.result_types().size() != inputs) {
    ThrowOpError(t.op, "the computation %" + c.name() + " takes " +
                           std::to_string(c.parameter_types().size()) + " parameters and gives " +
                           std::to_string(c.result_types().size()) + " results, but " +
                           std::to_string(inputs) + " inputs need " + std::to_string(2 * inputs) +
                           " and " + std::to_string(inputs) + ".");
  }
}

size_t CheckVariadic(const OpTyping& t) {
  if (t.operands.size() % 2 != 0) {
    ThrowOpError(t.op, "takes inputs and as many scalar init values, got " +
                           std::to_string(t.operands.size()) + " operands.");
  }
  const size_t n = t.operands.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    const ShapeDtype &x = t.operands[i], &init = t.operands[n + i];
    if (x.shape != t.operands[0].shape || !init.shape.empty() || init.dtype != x.dtype) {
      ThrowOpError(t.op, "input " + std::to_string(i) + " is " + Type(x) + " with init " +
                             Type(init) +
                             "; inputs share one shape, inits are scalars of their "
                             "input's dtype.");
    }
  }
  CheckReducer(t, n);
  return n;
}

XlaWork InputElementsWork(const OpTyping& t, const std::vector<ShapeDtype>& r, double per) {
  XlaWork work = ReadWriteWork(t.operands, r);
  work.vector_ops = static_cast<double>(NumElements(t.operands[0].shape)) * per;
  return work;
}

OpDef Reduce() {
  OpDef def;
  def.name = "reduce";
  def.summary =
      "inputs reduced over `dimensions` with `computation` from the init values "
      "(lax.reduce; XLA's reduce, variadic)";
  def.max_operands = -1;
  def.min_operands = 2;
  def.attributes = {AttrSpec::Of(base::Param::Ints("dimensions", "the dimensions reduced")),
                    AttrSpec::Computation("computation", "the reducer")};
  def.shape = [](const OpTyping& t) {
    const size_t n = CheckVariadic(t);
    const auto& dims = t.attrs.at("dimensions").AsInts();
    Shape shape;
    const Shape& in = t.operands[0].shape;
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
      if (std::count(dims.begin(), dims.end(), d) == 0) shape.push_back(in[d]);
    }
    for (int64_t d : dims) {
      if (d < 0 || d >= static_cast<int64_t>(in.size())) {
        ThrowOpError(t.op,
                     "dimension " + std::to_string(d) + " is outside " + Type(t.operands[0]) + ".");
      }
    }
    std::vector<ShapeDtype> out;
    for (size_t i = 0; i < n; ++i)
      out.push_back({shape, t.operands[i].dtype});
    return out;
  };
  def.compute = [](const OpCompute& c) {
    const size_t n = c.operands.size() / 2;
    const Computation& computation = c.attrs.at("computation").AsComputation();
    const Combiner combine = n == 1 ? CombinerOf(computation.Reducer()) : nullptr;
    const auto& dims = c.attrs.at("dimensions").AsInts();
    const Shape& in = c.operands[0].shape();
    const Shape out_shape = c.results[0].shape;
    const Shape out_strides = RowMajorStrides(out_shape);
    std::vector<DType> dtypes;
    std::vector<double> init;
    for (size_t i = 0; i < n; ++i) {
      dtypes.push_back(c.operands[i].dtype());
      init.push_back(c.operands[n + i].GetFlat(0));
    }
    std::vector<std::vector<double>> acc(static_cast<size_t>(NumElements(out_shape)), init);
    Shape index, kept;
    std::vector<double> x(n);
    // Input elements in row-major order: each reduced element folds in that order.
    for (int64_t e = 0; e < NumElements(in); ++e) {
      Unflatten(e, in, index);
      kept.clear();
      for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
        if (std::count(dims.begin(), dims.end(), d) == 0) kept.push_back(index[d]);
      }
      for (size_t i = 0; i < n; ++i)
        x[i] = c.operands[i].GetFlat(e);
      Fold(computation, combine, acc[static_cast<size_t>(FlatIndex(kept, out_strides))], x, dtypes);
    }
    std::vector<Array> out;
    for (size_t i = 0; i < n; ++i) {
      Array r(out_shape, dtypes[i]);
      for (int64_t o = 0; o < r.size(); ++o)
        StoreElement(r, o, acc[static_cast<size_t>(o)][i]);
      out.push_back(std::move(r));
    }
    return out;
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    return InputElementsWork(t, r, 1);
  };
  return def;
}

struct Window {
  std::vector<int64_t> size, stride, low, high, base_dilation, window_dilation;
};

Window WindowOf(const Attributes& attrs, size_t rank) {
  Window w;
  auto ints = [&](const char* name, int64_t fallback) {
    auto it = attrs.find(name);
    return it == attrs.end() ? std::vector<int64_t>(rank, fallback) : it->second.AsInts();
  };
  w.size = attrs.at("window_dimensions").AsInts();
  w.stride = ints("window_strides", 1);
  w.base_dilation = ints("base_dilations", 1);
  w.window_dilation = ints("window_dilations", 1);
  w.low.assign(rank, 0);
  w.high.assign(rank, 0);
  if (auto it = attrs.find("padding"); it != attrs.end()) {
    const auto& padding = it->second.AsIntLists();
    for (size_t d = 0; d < padding.size() && d < rank; ++d) {
      w.low[d] = padding[d].at(0);
      w.high[d] = padding[d].at(1);
    }
  }
  return w;
}

OpDef ReduceWindow() {
  OpDef def;
  def.name = "reduce_window";
  def.summary = "each window of the inputs reduced with `computation` (lax.reduce_window)";
  def.max_operands = -1;
  def.min_operands = 2;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("window_dimensions", "the window's size per dimension")),
      AttrSpec::Of(base::Param::Ints("window_strides", "the window's step per dimension")
                       .Auto("1 in every dimension")),
      AttrSpec::Of(
          base::Param::IntLists("padding", "[low, high] per dimension").Auto("no padding")),
      AttrSpec::Of(base::Param::Ints("base_dilations", "the operand's dilation per dimension")
                       .Auto("1 in every dimension")),
      AttrSpec::Of(base::Param::Ints("window_dilations", "the window's dilation per dimension")
                       .Auto("1 in every dimension")),
      AttrSpec::Computation("computation", "the reducer")};
  def.shape = [](const OpTyping& t) {
    const size_t n = CheckVariadic(t);
    const Shape& in = t.operands[0].shape;
    const Window w = WindowOf(t.attrs, in.size());
    if (w.size.size() != in.size() || w.stride.size() != in.size()) {
      ThrowOpError(t.op, "the window needs one size and stride per dimension of " +
                             Type(t.operands[0]) + ".");
    }
    Shape shape;
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t base = (in[d] - 1) * w.base_dilation[d] + 1 + w.low[d] + w.high[d];
      const int64_t window = (w.size[d] - 1) * w.window_dilation[d] + 1;
      shape.push_back(base < window ? 0 : (base - window) / w.stride[d] + 1);
    }
    std::vector<ShapeDtype> out;
    for (size_t i = 0; i < n; ++i)
      out.push_back({shape, t.operands[i].dtype});
    return out;
  };
  def.compute = [](const OpCompute& c) {
    const size_t n = c.operands.size() / 2;
    const Computation& computation = c.attrs.at("computation").AsComputation();
    const Combiner combine = n == 1 ? CombinerOf(computation.Reducer()) : nullptr;
    const Shape& in = c.operands[0].shape();
    const Window w = WindowOf(c.attrs, in.size());
    const Shape in_strides = RowMajorStrides(in);
    std::vector<DType> dtypes;
    std::vector<double> init;
    for (size_t i = 0; i < n; ++i) {
      dtypes.push_back(c.operands[i].dtype());
      init.push_back(c.operands[n + i].GetFlat(0));
    }
    std::vector<Array> out;
    for (size_t i = 0; i < n; ++i)
      out.emplace_back(c.results[0].shape, dtypes[i]);
    Shape o_index, w_index;
    std::vector<double> x(n);
    for (int64_t o = 0; o < out[0].size(); ++o) {
      Unflatten(o, out[0].shape(), o_index);
      std::vector<double> acc = init;
      for (int64_t k = 0; k < NumElements(Shape(w.size.begin(), w.size.end())); ++k) {
        Unflatten(k, Shape(w.size.begin(), w.size.end()), w_index);
        int64_t flat = 0;
        bool inside = true;
        for (size_t d = 0; d < in.size() && inside; ++d) {
          // Position in the dilated, padded input; only multiples of the dilation are real.
          const int64_t at =
              o_index[d] * w.stride[d] + w_index[d] * w.window_dilation[d] - w.low[d];
          inside = at >= 0 && at % w.base_dilation[d] == 0 && at / w.base_dilation[d] < in[d];
          if (inside) flat += at / w.base_dilation[d] * in_strides[d];
        }
        if (!inside) continue;
        for (size_t i = 0; i < n; ++i)
          x[i] = c.operands[i].GetFlat(flat);
        Fold(computation, combine, acc, x, dtypes);
      }
      for (size_t i = 0; i < n; ++i)
        StoreElement(out[i], o, acc[i]);
    }
    return out;
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    double window = 1;
    for (int64_t s : t.attrs.at("window_dimensions").AsInts())
      window *= static_cast<double>(s);
    XlaWork work = InputElementsWork(t, r, 0);
    work.vector_ops = static_cast<double>(NumElements(r[0].shape)) * window;
    return work;
  };
  return def;
}

OpDef Sort() {
  OpDef def;
  def.name = "sort";
  def.summary = "the operands sorted together along `dimension` by `comparator` (lax.sort)";
  def.max_operands = -1;
  def.attributes = {
      AttrSpec::Of(base::Param::Int("dimension", "the dimension sorted")),
      AttrSpec::Of(base::Param::Bool("is_stable", "keep equal elements in order").Default(false)),
      AttrSpec::Computation("comparator",
                            "(lhs_0, rhs_0, lhs_1, rhs_1, ...) -> pred: lhs sorts first")};
  def.shape = [](const OpTyping& t) {
    const int64_t dim = t.attrs.at("dimension").AsInt();
    for (const ShapeDtype& x : t.operands) {
      if (x.shape != t.operands[0].shape) {
        ThrowOpError(t.op, "the operands are " + Type(t.operands[0]) + " and " + Type(x) +
                               "; sort takes operands of one shape.");
      }
    }
    if (dim < 0 || dim >= static_cast<int64_t>(t.operands[0].shape.size())) {
      ThrowOpError(t.op,
                   "dimension " + std::to_string(dim) + " is outside " + Type(t.operands[0]) + ".");
    }
    return t.operands;
  };
  def.compute = [](const OpCompute& c) {
    const Computation& comparator = c.attrs.at("comparator").AsComputation();
    const auto dim = static_cast<size_t>(c.attrs.at("dimension").AsInt());
    const Shape& shape = c.operands[0].shape();
    const Shape strides = RowMajorStrides(shape);
    std::vector<Array> out = c.operands;
    const int64_t length = shape[dim];
    Shape index;
    for (int64_t e = 0; e < NumElements(shape); ++e) {
      Unflatten(e, shape, index);
      if (index[dim] != 0) continue;  // one pass per line along `dim`
      std::vector<int64_t> order(static_cast<size_t>(length));
      std::iota(order.begin(), order.end(), 0);
      auto flat = [&](int64_t j) { return e + j * strides[dim]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        std::vector<Array> args;
        for (const Array& x : c.operands) {
          args.push_back(Scalar(x.GetFlat(flat(a)), x.dtype()));
          args.push_back(Scalar(x.GetFlat(flat(b)), x.dtype()));
        }
        return comparator.Evaluate(args).at(0).GetFlat(0) != 0;
      });
      for (size_t i = 0; i < out.size(); ++i) {
        for (int64_t j = 0; j < length; ++j)
          out[i].SetFlat(flat(j), c.operands[i].GetFlat(flat(order[static_cast<size_t>(j)])));
      }
    }
    return out;
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    const int64_t length =
        t.operands[0].shape[static_cast<size_t>(t.attrs.at("dimension").AsInt())];
    return InputElementsWork(t, r, std::max(1.0, std::log2(static_cast<double>(length))));
  };
  return def;
}

}  // namespace

void RegisterReduceOps(OpRegistry& registry) {
  registry.Add(Reduce());
  registry.Add(ReduceWindow());
  registry.Add(Sort());
}

}  // namespace tpusim::dsl
