// Program ops that move data without arithmetic (jax.lax names; XLA's opcodes map onto them
// in hlo/): broadcast_in_dim, reshape, transpose, slice, dynamic_update_slice, pad, iota,
// rev, copy, constant, gather. All are memory-bound: their work is the bytes they read and
// write in HBM (a slice reads only the slice; an update in place only the update).

#include <algorithm>

#include "dsl/program/array_index.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

Shape ToShape(const std::vector<int64_t>& v) {
  return Shape(v.begin(), v.end());
}

void CheckDims(const OpTyping& t, const Shape& shape, const std::string& what) {
  for (int64_t n : shape) {
    if (n < 0) ThrowOpError(t.op, what + " " + ShapeString(shape) + " has a negative dimension.");
  }
}

// Work of an op that reads `read` bytes and writes its results.
XlaWork ReadsAndWrites(double read, const std::vector<ShapeDtype>& results) {
  XlaWork work = ReadWriteWork({}, results);
  work.hbm_read_bytes = read;
  for (const ShapeDtype& r : results)
    work.vector_ops += static_cast<double>(NumElements(r.shape));
  return work;
}

// Element-by-element copy: out[index] = x[source(index)], or `fill` where source says -1.
template <typename SourceOf>
Array Gathered(const Array& x, const ShapeDtype& out_type, SourceOf source) {
  Array out(out_type.shape, out_type.dtype);
  Shape index;
  for (int64_t i = 0; i < out.size(); ++i) {
    Unflatten(i, out_type.shape, index);
    const int64_t from = source(index);
    if (from >= 0) out.SetFlat(i, x.GetFlat(from));
  }
  return out;
}

OpDef BroadcastInDim() {
  OpDef def;
  def.name = "broadcast_in_dim";
  def.summary = "x placed in a larger shape, its dimension i at broadcast_dimensions[i]";
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("shape", "the result's shape")),
      AttrSpec::Of(base::Param::Ints("broadcast_dimensions",
                                     "for each dimension of x, the result dimension it becomes"))};
  def.shape = [](const OpTyping& t) {
    const ShapeDtype& x = t.operands[0];
    const Shape shape = ToShape(t.attrs.at("shape").AsInts());
    const auto& dims = t.attrs.at("broadcast_dimensions").AsInts();
    CheckDims(t, shape, "shape");
    if (dims.size() != x.shape.size()) {
      ThrowOpError(t.op, "broadcast_dimensions has " + std::to_string(dims.size()) +
                             " entries but x is " + Type(x) + "; give one per dimension of x.");
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(shape.size()) ||
          (x.shape[i] != 1 && x.shape[i] != shape[dims[i]])) {
        ThrowOpError(t.op, "dimension " + std::to_string(i) + " of x (" + Type(x) +
                               ") cannot become dimension " + std::to_string(dims[i]) + " of " +
                               ShapeString(shape) + ": it must exist and match, or be 1.");
      }
    }
    return std::vector<ShapeDtype>{{shape, x.dtype}};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    const auto& dims = c.attrs.at("broadcast_dimensions").AsInts();
    const Shape strides = RowMajorStrides(x.shape());
    return std::vector<Array>{Gathered(x, c.results[0], [&](const Shape& index) {
      int64_t from = 0;
      for (size_t i = 0; i < dims.size(); ++i)
        from += (x.shape()[i] == 1 ? 0 : index[dims[i]]) * strides[i];
      return from;
    })};
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    return ReadsAndWrites(Bytes(t.operands[0]), r);
  };
  return def;
}

OpDef Reshape() {
  OpDef def;
  def.name = "reshape";
  def.summary = "x's elements, row-major, in new_sizes (a copy: XLA's non-bitcast reshape)";
  def.attributes = {AttrSpec::Of(base::Param::Ints("new_sizes", "the result's shape"))};
  def.shape = [](const OpTyping& t) {
    const Shape shape = ToShape(t.attrs.at("new_sizes").AsInts());
    CheckDims(t, shape, "new_sizes");
    if (NumElements(shape) != NumElements(t.operands[0].shape)) {
      ThrowOpError(t.op, "cannot reshape " + Type(t.operands[0]) + " to " + ShapeString(shape) +
                             ": the element counts differ.");
    }
    return std::vector<ShapeDtype>{{shape, t.operands[0].dtype}};
  };
  def.compute = [](const OpCompute& c) {
    Array out(c.results[0].shape, c.results[0].dtype);
    out.bytes() = c.operands[0].bytes();
    return std::vector<Array>{out};
  };
  return def;
}

OpDef Transpose() {
  OpDef def;
  def.name = "transpose";
  def.summary = "x's dimensions permuted: result dimension i is x's permutation[i]";
  def.attributes = {AttrSpec::Of(base::Param::Ints("permutation", "a permutation of x's dims"))};
  def.shape = [](const OpTyping& t) {
    const ShapeDtype& x = t.operands[0];
    const auto& perm = t.attrs.at("permutation").AsInts();
    std::vector<bool> seen(x.shape.size(), false);
    Shape shape;
    for (int64_t p : perm) {
      if (perm.size() != x.shape.size() || p < 0 || p >= static_cast<int64_t>(x.shape.size()) ||
          seen[p]) {
        ThrowOpError(t.op, "permutation " + ShapeString(ToShape(perm)) +
                               " is not a permutation of the dimensions of " + Type(x) + ".");
      }
      seen[p] = true;
      shape.push_back(x.shape[p]);
    }
    if (perm.size() != x.shape.size()) {
      ThrowOpError(t.op, "permutation has " + std::to_string(perm.size()) + " entries but x is " +
                             Type(x) + "; give one per dimension.");
    }
    return std::vector<ShapeDtype>{{shape, x.dtype}};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    const auto& perm = c.attrs.at("permutation").AsInts();
    const Shape strides = RowMajorStrides(x.shape());
    return std::vector<Array>{Gathered(x, c.results[0], [&](const Shape& index) {
      int64_t from = 0;
      for (size_t i = 0; i < perm.size(); ++i)
        from += index[i] * strides[perm[i]];
      return from;
    })};
  };
  return def;
}

OpDef SliceOp() {
  OpDef def;
  def.name = "slice";
  def.summary = "x[start:limit:stride] in every dimension (lax.slice)";
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("start_indices", "one start per dimension")),
      AttrSpec::Of(base::Param::Ints("limit_indices", "one limit per dimension")),
      AttrSpec::Of(
          base::Param::Ints("strides", "one stride per dimension").Auto("1 in every dimension"))};
  def.shape = [](const OpTyping& t) {
    const ShapeDtype& x = t.operands[0];
    const auto& start = t.attrs.at("start_indices").AsInts();
    const auto& limit = t.attrs.at("limit_indices").AsInts();
    auto it = t.attrs.find("strides");
    const std::vector<int64_t> strides =
        it == t.attrs.end() ? std::vector<int64_t>(x.shape.size(), 1) : it->second.AsInts();
    const size_t rank = x.shape.size();
    if (start.size() != rank || limit.size() != rank || strides.size() != rank) {
      ThrowOpError(t.op, "x is " + Type(x) + "; give one start, limit and stride per dimension.");
    }
    Shape shape;
    for (size_t d = 0; d < rank; ++d) {
      if (start[d] < 0 || start[d] > limit[d] || limit[d] > x.shape[d] || strides[d] < 1) {
        ThrowOpError(t.op, "dimension " + std::to_string(d) + ": [" + std::to_string(start[d]) +
                               ":" + std::to_string(limit[d]) + ":" + std::to_string(strides[d]) +
                               "] does not fit " + Type(x) +
                               " (0 <= start <= limit <= size, stride >= 1).");
      }
      shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
    }
    return std::vector<ShapeDtype>{{shape, x.dtype}};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    const auto& start = c.attrs.at("start_indices").AsInts();
    auto it = c.attrs.find("strides");
    const Shape x_strides = RowMajorStrides(x.shape());
    return std::vector<Array>{Gathered(x, c.results[0], [&](const Shape& index) {
      int64_t from = 0;
      for (size_t d = 0; d < index.size(); ++d) {
        const int64_t stride = it == c.attrs.end() ? 1 : it->second.AsInts()[d];
        from += (start[d] + index[d] * stride) * x_strides[d];
      }
      return from;
    })};
  };
  def.work = [](const OpTyping&, const std::vector<ShapeDtype>& r) {
    return ReadsAndWrites(Bytes(r[0]), r);
  };
  return def;
}

// Scalar start operands, clamped so the update fits, as XLA does.
Shape ClampedStarts(const std::vector<Array>& operands, size_t first, const Shape& operand,
                    const Shape& sizes) {
  Shape starts;
  for (size_t d = 0; d < operand.size(); ++d) {
    const auto s = static_cast<int64_t>(operands[first + d].GetFlat(0));
    starts.push_back(std::clamp<int64_t>(s, 0, operand[d] - sizes[d]));
  }
  return starts;
}

void CheckScalarIndices(const OpTyping& t, size_t first, size_t rank) {
  if (t.operands.size() != first + rank) {
    ThrowOpError(t.op, "takes " + std::to_string(rank) + " scalar start indices for " +
                           Type(t.operands[0]) + ", got " +
                           std::to_string(t.operands.size() - first) + ".");
  }
  for (size_t i = first; i < t.operands.size(); ++i) {
    if (!t.operands[i].shape.empty() || IsFloating(t.operands[i].dtype)) {
      ThrowOpError(t.op, "start index operand " + std::to_string(i) + " is " + Type(t.operands[i]) +
                             "; start indices are integer scalars.");
    }
  }
}

OpDef DynamicUpdateSlice() {
  OpDef def;
  def.name = "dynamic_update_slice";
  def.summary = "x with `update` written at the scalar start indices (clamped), in place";
  def.min_operands = 2;
  def.max_operands = -1;
  def.shape = [](const OpTyping& t) {
    const ShapeDtype &x = t.operands[0], &update = t.operands[1];
    if (update.dtype != x.dtype || update.shape.size() != x.shape.size()) {
      ThrowOpError(t.op, "update is " + Type(update) + " but x is " + Type(x) +
                             "; it needs x's dtype and rank.");
    }
    for (size_t d = 0; d < x.shape.size(); ++d) {
      if (update.shape[d] > x.shape[d]) {
        ThrowOpError(t.op, "update " + Type(update) + " is larger than x " + Type(x) +
                               " in dimension " + std::to_string(d) + ".");
      }
    }
    CheckScalarIndices(t, 2, x.shape.size());
    return std::vector<ShapeDtype>{x};
  };
  def.compute = [](const OpCompute& c) {
    Array out = c.operands[0];
    const Array& update = c.operands[1];
    out.Place(update, ClampedStarts(c.operands, 2, out.shape(), update.shape()));
    return std::vector<Array>{out};
  };
  // In place: XLA reuses x's buffer and copies only the update into it, as an XLA copy does
  // (DMA, no vector ops; docs/time-model.md), like dynamic_slice and concatenate.
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>&) {
    return ReadWriteWork({t.operands[1]}, {t.operands[1]});
  };
  return def;
}

OpDef Pad() {
  OpDef def;
  def.name = "pad";
  def.summary = "x with padding_value around and between its elements (lax.pad)";
  def.min_operands = def.max_operands = 2;
  def.attributes = {AttrSpec::Of(base::Param::IntLists(
      "padding_config", "per dimension [low, high, interior]; negative low/high crop"))};
  def.shape = [](const OpTyping& t) {
    const ShapeDtype &x = t.operands[0], &value = t.operands[1];
    const auto& config = t.attrs.at("padding_config").AsIntLists();
    if (!value.shape.empty() || value.dtype != x.dtype) {
      ThrowOpError(t.op, "padding_value is " + Type(value) + "; it must be a scalar of x's dtype.");
    }
    if (config.size() != x.shape.size()) {
      ThrowOpError(t.op, "padding_config has " + std::to_string(config.size()) +
                             " entries but x is " + Type(x) + "; give one per dimension.");
    }
    Shape shape;
    for (size_t d = 0; d < config.size(); ++d) {
      const auto& p = config[d];
      if (p.size() != 3 || p[2] < 0) {
        ThrowOpError(t.op, "padding_config entry " + std::to_string(d) +
                               " must be [low, high, interior] with interior >= 0.");
      }
      const int64_t n = x.shape[d];
      const int64_t size = p[0] + p[1] + n + std::max<int64_t>(n - 1, 0) * p[2];
      if (size < 0)
        ThrowOpError(t.op, "padding crops dimension " + std::to_string(d) + " below 0.");
      shape.push_back(size);
    }
    return std::vector<ShapeDtype>{{shape, x.dtype}};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    const double fill = c.operands[1].GetFlat(0);
    const auto& config = c.attrs.at("padding_config").AsIntLists();
    const Shape strides = RowMajorStrides(x.shape());
    Array out = Gathered(x, c.results[0], [&](const Shape& index) -> int64_t {
      int64_t from = 0;
      for (size_t d = 0; d < index.size(); ++d) {
        const int64_t at = index[d] - config[d][0];
        const int64_t step = config[d][2] + 1;
        if (at < 0 || at % step != 0 || at / step >= x.shape()[d]) return -1;
        from += at / step * strides[d];
      }
      return from;
    });
    // Where nothing was copied, the padding value. A second pass keeps Gathered simple.
    Shape index;
    for (int64_t i = 0; i < out.size(); ++i) {
      Unflatten(i, out.shape(), index);
      for (size_t d = 0; d < index.size(); ++d) {
        const int64_t at = index[d] - config[d][0];
        const int64_t step = config[d][2] + 1;
        if (at < 0 || at % step != 0 || at / step >= x.shape()[d]) {
          out.SetFlat(i, fill);
          break;
        }
      }
    }
    return std::vector<Array>{out};
  };
  return def;
}

OpDef Iota() {
  OpDef def;
  def.name = "iota";
  def.summary = "0, 1, 2, ... along `dimension` of a new array (lax.broadcasted_iota)";
  def.min_operands = def.max_operands = 0;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("shape", "the array's shape")),
      AttrSpec::Of(DTypeAttr("dtype", "the array's dtype")),
      AttrSpec::Of(base::Param::Int("dimension", "the dimension that counts up").Default(0))};
  def.shape = [](const OpTyping& t) {
    const Shape shape = ToShape(t.attrs.at("shape").AsInts());
    CheckDims(t, shape, "shape");
    const int64_t dim = t.attrs.at("dimension").AsInt();
    if (dim < 0 || (dim >= static_cast<int64_t>(shape.size()) && !shape.empty())) {
      ThrowOpError(t.op,
                   "dimension " + std::to_string(dim) + " is outside " + ShapeString(shape) + ".");
    }
    return std::vector<ShapeDtype>{{shape, t.attrs.at("dtype").AsDType()}};
  };
  def.compute = [](const OpCompute& c) {
    Array out(c.results[0].shape, c.results[0].dtype);
    const auto dim = static_cast<size_t>(c.attrs.at("dimension").AsInt());
    Shape index;
    for (int64_t i = 0; i < out.size(); ++i) {
      Unflatten(i, out.shape(), index);
      out.SetFlat(i, static_cast<double>(index.empty() ? 0 : index[dim]));
    }
    return std::vector<Array>{out};
  };
  return def;
}

OpDef Rev() {
  OpDef def;
  def.name = "rev";
  def.summary = "x reversed along `dimensions` (lax.rev)";
  def.attributes = {AttrSpec::Of(base::Param::Ints("dimensions", "the dimensions to reverse"))};
  def.shape = [](const OpTyping& t) {
    for (int64_t d : t.attrs.at("dimensions").AsInts()) {
      if (d < 0 || d >= static_cast<int64_t>(t.operands[0].shape.size())) {
        ThrowOpError(t.op,
                     "dimension " + std::to_string(d) + " is outside " + Type(t.operands[0]) + ".");
      }
    }
    return std::vector<ShapeDtype>{t.operands[0]};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    const auto& dims = c.attrs.at("dimensions").AsInts();
    const Shape strides = RowMajorStrides(x.shape());
    return std::vector<Array>{Gathered(x, c.results[0], [&](const Shape& index) {
      Shape from = index;
      for (int64_t d : dims)
        from[d] = x.shape()[d] - 1 - index[d];
      return FlatIndex(from, strides);
    })};
  };
  return def;
}

OpDef Copy() {
  OpDef def;
  def.name = "copy";
  def.summary = "a copy of x in a new buffer";
  def.shape = [](const OpTyping& t) { return std::vector<ShapeDtype>{t.operands[0]}; };
  def.compute = [](const OpCompute& c) { return std::vector<Array>{c.operands[0]}; };
  // XLA copies by DMA: the bytes are read and written, no vector unit touches them.
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    return ReadWriteWork(t.operands, r);
  };
  return def;
}

OpDef Constant() {
  OpDef def;
  def.name = "constant";
  def.summary =
      "an array the program holds (XLA's constant): free, it is loaded with the "
      "program; `values` row-major, or one value for every element";
  def.min_operands = def.max_operands = 0;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("shape", "the array's shape")),
      AttrSpec::Of(DTypeAttr("dtype", "the array's dtype")),
      AttrSpec::Of(
          base::Param::Doubles(
              "values", "its elements; unset when unknown (the program then runs timing-only)")
              .Auto("unknown: the program runs timing-only"))};
  def.shape = [](const OpTyping& t) {
    const Shape shape = ToShape(t.attrs.at("shape").AsInts());
    CheckDims(t, shape, "shape");
    if (auto it = t.attrs.find("values"); it != t.attrs.end()) {
      const size_t n = it->second.AsFloats().size();
      if (n != 1 && static_cast<int64_t>(n) != NumElements(shape)) {
        ThrowOpError(t.op, "has " + std::to_string(n) + " values for shape " + ShapeString(shape) +
                               "; give one per element, or one for all.");
      }
    }
    return std::vector<ShapeDtype>{{shape, t.attrs.at("dtype").AsDType()}};
  };
  def.compute = [](const OpCompute& c) {
    auto it = c.attrs.find("values");
    if (it == c.attrs.end()) {
      ThrowOpError(c.op,
                   "its values are not known (elided when the module was printed), so a "
                   "functional run cannot compute with it; run timing-only.");
    }
    const auto& values = it->second.AsFloats();
    Array out(c.results[0].shape, c.results[0].dtype);
    for (int64_t i = 0; i < out.size(); ++i)
      out.SetFlat(i, values[values.size() == 1 ? 0 : static_cast<size_t>(i)]);
    return std::vector<Array>{out};
  };
  def.work = [](const OpTyping&, const std::vector<ShapeDtype>&) { return XlaWork{}; };
  return def;
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  registry.Add(BroadcastInDim());
  registry.Add(Reshape());
  registry.Add(Transpose());
  registry.Add(SliceOp());
  registry.Add(DynamicUpdateSlice());
  registry.Add(Pad());
  registry.Add(Iota());
  registry.Add(Rev());
  registry.Add(Copy());
  registry.Add(Constant());
}

}  // namespace tpusim::dsl
