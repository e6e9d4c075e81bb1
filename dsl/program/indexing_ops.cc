// lax.gather and lax.scatter with XLA's dimension numbers (without batching dimensions).
// Both are memory-bound: a gather reads its indices and the slices it gathers and writes
// them; a scatter reads its indices and updates and reads, combines and writes the elements
// they land on (in place: XLA reuses the operand's buffer).

#include <algorithm>

#include "dsl/program/array_index.h"
#include "dsl/program/elementwise_numerics.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The index vector at batch position `batch` of `indices` (index_vector_dim may be the rank:
// an implicit trailing dimension of size 1).
std::vector<int64_t> IndexVector(const Array& indices, const Shape& batch, int64_t vector_dim) {
  const Shape& shape = indices.shape();
  const Shape strides = RowMajorStrides(shape);
  const int64_t length = vector_dim < static_cast<int64_t>(shape.size()) ? shape[vector_dim] : 1;
  std::vector<int64_t> v;
  for (int64_t k = 0; k < length; ++k) {
    Shape at;
    size_t b = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      at.push_back(d == vector_dim ? k : batch[b++]);
    v.push_back(static_cast<int64_t>(indices.GetFlat(FlatIndex(at, strides))));
  }
  return v;
}

OpDef Gather() {
  OpDef def;
  def.name = "gather";
  def.summary = "slices of operand at the start indices (lax.gather, XLA's dimension numbers)";
  def.min_operands = def.max_operands = 2;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("offset_dims", "result dimensions that index a slice")),
      AttrSpec::Of(base::Param::Ints("collapsed_slice_dims", "operand dims sliced to 1, dropped")),
      AttrSpec::Of(base::Param::Ints("start_index_map", "operand dim of each index component")),
      AttrSpec::Of(base::Param::Int("index_vector_dim", "the dimension of start_indices")),
      AttrSpec::Of(base::Param::Ints("slice_sizes", "the slice's size per operand dimension")),
      AttrSpec::Of(base::Param::Ints("result_shape", "the result's shape, as XLA printed it"))};
  def.shape = [](const OpTyping& t) {
    const auto& shape = t.attrs.at("result_shape").AsInts();
    if (IsFloating(t.operands[1].dtype)) {
      ThrowOpError(t.op, "start_indices is " + Type(t.operands[1]) + "; indices are integers.");
    }
    if (t.attrs.at("slice_sizes").AsInts().size() != t.operands[0].shape.size()) {
      ThrowOpError(t.op,
                   "slice_sizes needs one size per dimension of " + Type(t.operands[0]) + ".");
    }
    return std::vector<ShapeDtype>{{Shape(shape.begin(), shape.end()), t.operands[0].dtype}};
  };
  def.compute = [](const OpCompute& c) {
    const Array &operand = c.operands[0], &indices = c.operands[1];
    const auto& offset_dims = c.attrs.at("offset_dims").AsInts();
    const auto& collapsed = c.attrs.at("collapsed_slice_dims").AsInts();
    const auto& start_map = c.attrs.at("start_index_map").AsInts();
    const int64_t vector_dim = c.attrs.at("index_vector_dim").AsInt();
    const auto& sizes = c.attrs.at("slice_sizes").AsInts();
    const Shape strides = RowMajorStrides(operand.shape());
    Array out(c.results[0].shape, c.results[0].dtype);
    Shape index;
    for (int64_t o = 0; o < out.size(); ++o) {
      Unflatten(o, out.shape(), index);
      Shape batch, offset;
      for (int64_t d = 0; d < static_cast<int64_t>(index.size()); ++d)
        (Contains(offset_dims, d) ? offset : batch).push_back(index[d]);
      const std::vector<int64_t> starts = IndexVector(indices, batch, vector_dim);
      Shape at(operand.shape().size(), 0);
      for (size_t k = 0; k < start_map.size() && k < starts.size(); ++k) {
        const int64_t d = start_map[k];
        at[d] = std::clamp<int64_t>(starts[k], 0, operand.shape()[d] - sizes[d]);
      }
      size_t next = 0;
      for (int64_t d = 0; d < static_cast<int64_t>(at.size()); ++d) {
        if (!Contains(collapsed, d)) at[d] += offset.at(next++);
      }
      out.SetFlat(o, operand.GetFlat(FlatIndex(at, strides)));
    }
    return std::vector<Array>{out};
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    // The indices and the gathered slices read, the slices written.
    XlaWork work;
    work.hbm_read_bytes = Bytes(t.operands[1]) + Bytes(r[0]);
    work.hbm_write_bytes = Bytes(r[0]);
    work.vector_ops = static_cast<double>(NumElements(r[0].shape));
    return work;
  };
  return def;
}

OpDef Scatter() {
  OpDef def;
  def.name = "scatter";
  def.summary =
      "operand with updates combined in at the scatter indices by `computation` "
      "(lax.scatter, XLA's dimension numbers); windows that fall outside are skipped";
  def.min_operands = def.max_operands = 3;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("update_window_dims", "update dims inside a window")),
      AttrSpec::Of(base::Param::Ints("inserted_window_dims", "operand dims of window size 1")),
      AttrSpec::Of(
          base::Param::Ints("scatter_dims_to_operand_dims", "operand dim of each index component")),
      AttrSpec::Of(base::Param::Int("index_vector_dim", "the dimension of scatter_indices")),
      AttrSpec::Computation("computation", "(old, update) -> new")};
  def.shape = [](const OpTyping& t) {
    if (IsFloating(t.operands[1].dtype)) {
      ThrowOpError(t.op, "scatter_indices is " + Type(t.operands[1]) + "; indices are integers.");
    }
    if (t.operands[2].dtype != t.operands[0].dtype) {
      ThrowOpError(t.op, "updates are " + Type(t.operands[2]) + " but the operand is " +
                             Type(t.operands[0]) + "; give them one dtype.");
    }
    return std::vector<ShapeDtype>{t.operands[0]};
  };
  def.compute = [](const OpCompute& c) {
    const Array &indices = c.operands[1], &updates = c.operands[2];
    Array out = c.operands[0];
    const auto& window_dims = c.attrs.at("update_window_dims").AsInts();
    const auto& inserted = c.attrs.at("inserted_window_dims").AsInts();
    const auto& to_operand = c.attrs.at("scatter_dims_to_operand_dims").AsInts();
    const int64_t vector_dim = c.attrs.at("index_vector_dim").AsInt();
    const Computation& computation = c.attrs.at("computation").AsComputation();
    const Shape strides = RowMajorStrides(out.shape());
    Shape index;
    for (int64_t u = 0; u < updates.size(); ++u) {
      Unflatten(u, updates.shape(), index);
      Shape batch, window;
      for (int64_t d = 0; d < static_cast<int64_t>(index.size()); ++d)
        (Contains(window_dims, d) ? window : batch).push_back(index[d]);
      const std::vector<int64_t> starts = IndexVector(indices, batch, vector_dim);
      Shape at(out.shape().size(), 0);
      for (size_t k = 0; k < to_operand.size() && k < starts.size(); ++k)
        at[to_operand[k]] = starts[k];
      size_t next = 0;
      bool inside = true;
      for (int64_t d = 0; d < static_cast<int64_t>(at.size()); ++d) {
        if (!Contains(inserted, d)) at[d] += window.at(next++);
        inside = inside && at[d] >= 0 && at[d] < out.shape()[d];
      }
      if (!inside) continue;
      const int64_t flat = FlatIndex(at, strides);
      Array old_value(Shape{}, out.dtype()), update(Shape{}, out.dtype());
      old_value.SetFlat(0, out.GetFlat(flat));
      update.SetFlat(0, updates.GetFlat(u));
      out.SetFlat(flat, computation.Evaluate({old_value, update}).at(0).GetFlat(0));
    }
    return std::vector<Array>{out};
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>&) {
    // The indices, the updates and the old values they combine with read, the new values
    // written.
    XlaWork work;
    work.hbm_read_bytes = Bytes(t.operands[1]) + 2 * Bytes(t.operands[2]);
    work.hbm_write_bytes = Bytes(t.operands[2]);
    work.vector_ops = static_cast<double>(NumElements(t.operands[2].shape));
    return work;
  };
  return def;
}

}  // namespace

void RegisterIndexingOps(OpRegistry& registry) {
  registry.Add(Gather());
  registry.Add(Scatter());
}

}  // namespace tpusim::dsl
