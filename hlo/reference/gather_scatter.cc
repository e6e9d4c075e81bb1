// gather and scatter with XLA's dimension numbers (without batching dimensions): gather
// clamps each slice's start into the operand; scatter skips an update whose window does not
// fit the operand, and combines the others with its to_apply computation in row-major order
// of the updates.

#include <algorithm>

#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

void RefuseBatching(const OpInput& in, std::initializer_list<const char*> attributes) {
  for (const char* attribute : attributes) {
    if (!in.IntList(attribute).empty())
      Fail(in.instruction,
           std::string(attribute) + " is not modelled; batching dimensions are not");
  }
}

// The start indices of one slice or update: the vector of `indices` along
// index_vector_dim (the indices' last dimension when it equals their rank, where each index
// is a scalar) at position `batch` of the other dimensions.
class IndexVectors {
 public:
  IndexVectors(const OpInput& in, const dsl::Array& indices, int64_t index_vector_dim, size_t count)
      : indices_(indices), dim_(static_cast<size_t>(index_vector_dim)), count_(count) {
    const size_t rank = indices.shape().size();
    if (IsFloat(indices.dtype()) || dim_ > rank)
      Fail(in.instruction, "its indices should be integers with index_vector_dim within them");
    const int64_t vector_size = dim_ < rank ? indices.shape()[dim_] : 1;
    if (vector_size != static_cast<int64_t>(count))
      Fail(in.instruction, "its index vectors have " + std::to_string(vector_size) +
                               " entries, not one per mapped dimension (" + std::to_string(count) +
                               ")");
    strides_ = Strides(indices.shape());
  }

  // The indices' dimensions other than index_vector_dim: what the batch positions run over.
  Dims BatchDims() const {
    Dims dims = indices_.shape();
    if (dim_ < dims.size()) dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(dim_));
    return dims;
  }

  Dims At(const Dims& batch) const {
    int64_t base = 0;
    for (size_t i = 0, d = 0; i < batch.size(); ++i, ++d) {
      if (d == dim_) ++d;
      base += batch[i] * strides_[d];
    }
    Dims vector(count_);
    const int64_t step = dim_ < strides_.size() ? strides_[dim_] : 0;
    for (size_t k = 0; k < count_; ++k)
      vector[k] = GetInt(indices_, base + static_cast<int64_t>(k) * step);
    return vector;
  }

 private:
  const dsl::Array& indices_;
  size_t dim_;
  size_t count_;
  Dims strides_;
};

Value Gather(const OpInput& in) {
  in.ExpectOperands(2);
  const dsl::Array &operand = in.Array(0), &indices = in.Array(1);
  RefuseBatching(in, {"operand_batching_dims", "start_indices_batching_dims"});
  const std::vector<int64_t> offset_dims = in.IntList("offset_dims");
  const std::vector<int64_t> collapsed = in.IntList("collapsed_slice_dims");
  const std::vector<int64_t> start_index_map = in.IntList("start_index_map");
  const std::vector<int64_t> slice_sizes = in.IntList("slice_sizes");
  const int64_t index_vector_dim = DecodeInt(in.instruction.GetAttribute("index_vector_dim"));
  const Dims& dims = operand.shape();
  if (slice_sizes.size() != dims.size())
    Fail(in.instruction, "slice_sizes needs one entry per dimension");
  for (size_t d = 0; d < dims.size(); ++d)
    if (slice_sizes[d] < 0 || slice_sizes[d] > dims[d])
      Fail(in.instruction, "slice_sizes should be within its operand's dimensions");
  for (const int64_t d : start_index_map)
    if (d < 0 || d >= static_cast<int64_t>(dims.size()))
      Fail(in.instruction, "start_index_map names a dimension outside its operand");
  const IndexVectors vectors(in, indices, index_vector_dim, start_index_map.size());
  // Operand dimensions that are not collapsed, in order: where the offset dimensions go.
  std::vector<size_t> window_dims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!Contains(collapsed, static_cast<int64_t>(d))) window_dims.push_back(d);
  if (window_dims.size() != offset_dims.size())
    Fail(in.instruction,
         "offset_dims should name one result dimension per uncollapsed slice dimension");
  dsl::Array out = NewArray(ResultDType(in.instruction), in.instruction.shape.dimensions);
  if (out.dtype() != operand.dtype())
    Fail(in.instruction, "its element type differs from its operand's");
  Dims batch_dims;
  for (size_t d = 0; d < out.shape().size(); ++d)
    if (!Contains(offset_dims, static_cast<int64_t>(d))) batch_dims.push_back(out.shape()[d]);
  bool fits = batch_dims == vectors.BatchDims();
  for (size_t j = 0; fits && j < offset_dims.size(); ++j) {
    const int64_t o = offset_dims[j];
    fits = o >= 0 && o < static_cast<int64_t>(out.shape().size()) &&
           out.shape()[static_cast<size_t>(o)] == slice_sizes[window_dims[j]];
  }
  if (!fits) Fail(in.instruction, "its shape is not its indices' batch and slice_sizes' offsets");
  const Dims strides = Strides(dims);
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](const Dims& index) {
    Dims batch;
    for (size_t d = 0; d < index.size(); ++d)
      if (!Contains(offset_dims, static_cast<int64_t>(d))) batch.push_back(index[d]);
    const Dims starts = vectors.At(batch);
    Dims position(dims.size(), 0);
    for (size_t k = 0; k < start_index_map.size(); ++k) {
      const auto d = static_cast<size_t>(start_index_map[k]);
      position[d] =
          std::clamp<int64_t>(starts[k], 0, std::max<int64_t>(0, dims[d] - slice_sizes[d]));
    }
    int64_t offset = 0;
    for (size_t j = 0; j < window_dims.size(); ++j)
      position[window_dims[j]] += index.at(static_cast<size_t>(offset_dims[j]));
    for (size_t d = 0; d < dims.size(); ++d)
      offset += position[d] * strides[d];
    CopyElement(operand, offset, out, flat++);
  });
  return Value::Of(std::move(out));
}

Value Scatter(const OpInput& in) {
  if (in.operands.size() < 3 || in.operands.size() % 2 != 1)
    Fail(in.instruction, "it takes N operands, the scatter indices and N updates");
  const size_t n = in.operands.size() / 2;
  RefuseBatching(in, {"input_batching_dims", "scatter_indices_batching_dims"});
  const std::vector<int64_t> update_window_dims = in.IntList("update_window_dims");
  const std::vector<int64_t> inserted = in.IntList("inserted_window_dims");
  const std::vector<int64_t> to_operand = in.IntList("scatter_dims_to_operand_dims");
  const int64_t index_vector_dim = DecodeInt(in.instruction.GetAttribute("index_vector_dim"));
  const Reducer reducer = in.MakeReducer("to_apply");
  std::vector<dsl::Array> results;
  for (size_t k = 0; k < n; ++k)
    results.push_back(in.Array(k));
  const Dims& dims = results[0].shape();
  const dsl::Array& indices = in.Array(n);
  const Dims& update_dims = in.Array(n + 1).shape();
  for (size_t k = 0; k < n; ++k) {
    if (results[k].shape() != dims || in.Array(n + 1 + k).shape() != update_dims)
      Fail(in.instruction, "its operands should share one shape and its updates another");
  }
  for (const int64_t d : to_operand)
    if (d < 0 || d >= static_cast<int64_t>(dims.size()))
      Fail(in.instruction, "scatter_dims_to_operand_dims names a dimension outside its operand");
  const IndexVectors vectors(in, indices, index_vector_dim, to_operand.size());
  std::vector<size_t> window_dims;  // operand dimensions the update window spans, in order
  for (size_t d = 0; d < dims.size(); ++d)
    if (!Contains(inserted, static_cast<int64_t>(d))) window_dims.push_back(d);
  if (window_dims.size() != update_window_dims.size())
    Fail(in.instruction,
         "update_window_dims should name one update dimension per operand dimension not inserted");
  Dims scatter_dims;
  for (size_t d = 0; d < update_dims.size(); ++d)
    if (!Contains(update_window_dims, static_cast<int64_t>(d)))
      scatter_dims.push_back(update_dims[d]);
  bool fits = scatter_dims == vectors.BatchDims();
  for (const int64_t u : update_window_dims)
    fits = fits && u >= 0 && u < static_cast<int64_t>(update_dims.size());
  if (!fits) Fail(in.instruction, "its updates' shape is not its indices' batch and its windows");
  const Dims strides = Strides(dims);
  int64_t flat = 0;
  // Reused across updates: besides saving allocations, vectors built inside this lambda
  // trip GCC 12's -O3 free-nonheap-object false positive.
  Dims batch, start, window, position;
  ForEachIndex(update_dims, [&](const Dims& index) {
    const int64_t update_flat = flat++;
    batch.clear();
    for (size_t d = 0; d < index.size(); ++d)
      if (!Contains(update_window_dims, static_cast<int64_t>(d))) batch.push_back(index[d]);
    const Dims starts = vectors.At(batch);
    start.assign(dims.size(), 0);
    window.assign(dims.size(), 1);
    position.assign(dims.size(), 0);
    for (size_t k = 0; k < to_operand.size(); ++k)
      start[static_cast<size_t>(to_operand[k])] = starts[k];
    for (size_t j = 0; j < window_dims.size(); ++j) {
      const auto u = static_cast<size_t>(update_window_dims[j]);
      window[window_dims[j]] = update_dims.at(u);
      position[window_dims[j]] = index.at(u);
    }
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (start[d] < 0 || start[d] + window[d] > dims[d]) return;  // the window does not fit
      offset += (start[d] + position[d]) * strides[d];
    }
    std::vector<dsl::Array> accumulators, values;
    for (size_t k = 0; k < n; ++k) {
      accumulators.push_back(ElementOf(results[k], offset));
      values.push_back(ElementOf(in.Array(n + 1 + k), update_flat));
    }
    const std::vector<dsl::Array> combined = reducer.Apply(accumulators, values);
    for (size_t k = 0; k < n; ++k)
      CopyElement(combined[k], 0, results[k], offset);
  });
  if (n == 1) return Value::Of(std::move(results[0]));
  std::vector<Value> elements;
  for (dsl::Array& r : results)
    elements.push_back(Value::Of(std::move(r)));
  return Value::Tuple(std::move(elements));
}

}  // namespace

void AddGatherScatterOps(OpTable& table) {
  table["gather"] = Gather;
  table["scatter"] = Scatter;
}

}  // namespace tpusim::hlo::reference
