// Operations that run a called computation per element: reduce and reduce-window (variadic,
// the reduced elements in row-major order after the init value), sort (stable, with the
// comparator computation) and map.

#include <algorithm>
#include <numeric>

#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

namespace {

// The arrays of a variadic operation: operands [first, first + count), all of one shape.
std::vector<const dsl::Array*> Arrays(const OpInput& in, size_t first, size_t count) {
  std::vector<const dsl::Array*> arrays;
  for (size_t k = first; k < first + count; ++k) {
    arrays.push_back(&in.Array(k));
    if (arrays.back()->shape() != arrays.front()->shape())
      Fail(in.instruction, "its operands should all have one shape");
  }
  return arrays;
}

// Result arrays of `dims`, one per output of a variadic operation (a tuple result when
// there are several), typed like the instruction's shape says.
std::vector<dsl::Array> Results(const OpInput& in, size_t count, const Dims& dims) {
  const Shape& shape = in.instruction.shape;
  std::vector<dsl::Array> results;
  for (size_t k = 0; k < count; ++k) {
    const Shape& element = count == 1 && shape.IsArray() ? shape : shape.tuple_shapes.at(k);
    if (!element.IsArray()) Fail(in.instruction, "its result should hold arrays");
    CheckModelled(in.instruction, element);
    results.push_back(NewArray(*ModelledDType(element.element_type), dims));
  }
  return results;
}

Value Pack(std::vector<dsl::Array> arrays, const Shape& shape) {
  if (arrays.size() == 1 && shape.IsArray()) return Value::Of(std::move(arrays[0]));
  std::vector<Value> elements;
  for (dsl::Array& a : arrays)
    elements.push_back(Value::Of(std::move(a)));
  return Value::Tuple(std::move(elements));
}

size_t HalfOfOperands(const OpInput& in) {
  if (in.operands.empty() || in.operands.size() % 2 != 0)
    Fail(in.instruction, "it takes N arrays and N init values");
  return in.operands.size() / 2;
}

std::vector<dsl::Array> Inits(const OpInput& in, size_t n) {
  std::vector<dsl::Array> inits;
  for (size_t k = n; k < 2 * n; ++k) {
    inits.push_back(in.Array(k));
    if (inits.back().size() != 1) Fail(in.instruction, "its init values should be scalars");
  }
  return inits;
}

void Store(const std::vector<dsl::Array>& accumulators, std::vector<dsl::Array>& results,
           int64_t flat, const Instruction& instruction) {
  for (size_t k = 0; k < results.size(); ++k) {
    if (accumulators[k].dtype() != results[k].dtype())
      Fail(instruction, "its reducer returns another element type than its result's");
    CopyElement(accumulators[k], 0, results[k], flat);
  }
}

// accumulators = to_apply(accumulators..., element `offset` of each input...).
void Accumulate(const Reducer& reducer, const std::vector<const dsl::Array*>& inputs,
                int64_t offset, std::vector<dsl::Array>& accumulators) {
  std::vector<dsl::Array> values;
  for (const dsl::Array* input : inputs)
    values.push_back(ElementOf(*input, offset));
  accumulators = reducer.Apply(accumulators, values);
}

Value Reduce(const OpInput& in) {
  const size_t n = HalfOfOperands(in);
  const std::vector<const dsl::Array*> inputs = Arrays(in, 0, n);
  const std::vector<dsl::Array> inits = Inits(in, n);
  const Reducer reducer = in.MakeReducer("to_apply");
  const Dims& dims = inputs[0]->shape();
  std::vector<bool> reduced(dims.size(), false);
  for (const int64_t d : in.IntList("dimensions")) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()))
      Fail(in.instruction, "dimensions names " + std::to_string(d) + ", outside its operand");
    reduced[static_cast<size_t>(d)] = true;
  }
  const Dims strides = Strides(dims);
  Dims kept_dims, kept_strides, reduced_dims, reduced_strides;
  for (size_t d = 0; d < dims.size(); ++d) {
    (reduced[d] ? reduced_dims : kept_dims).push_back(dims[d]);
    (reduced[d] ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  std::vector<dsl::Array> results = Results(in, n, kept_dims);
  int64_t flat = 0;
  ForEachIndex(kept_dims, [&](const Dims& kept) {
    int64_t base = 0;
    for (size_t i = 0; i < kept.size(); ++i)
      base += kept[i] * kept_strides[i];
    std::vector<dsl::Array> accumulators = inits;
    ForEachIndex(reduced_dims, [&](const Dims& index) {
      int64_t offset = base;
      for (size_t i = 0; i < index.size(); ++i)
        offset += index[i] * reduced_strides[i];
      Accumulate(reducer, inputs, offset, accumulators);
    });
    Store(accumulators, results, flat++, in.instruction);
  });
  return Pack(std::move(results), in.instruction.shape);
}

Value ReduceWindow(const OpInput& in) {
  const size_t n = HalfOfOperands(in);
  const std::vector<const dsl::Array*> inputs = Arrays(in, 0, n);
  const std::vector<dsl::Array> inits = Inits(in, n);
  const Reducer reducer = in.MakeReducer("to_apply");
  const Dims& dims = inputs[0]->shape();
  const std::vector<WindowDimension> window = DecodeWindow(in.instruction.GetAttribute("window"));
  if (window.size() != dims.size()) Fail(in.instruction, "window needs one entry per dimension");
  for (const WindowDimension& w : window)
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      Fail(in.instruction, "its window's strides and dilations should be 1 or more");
  const Shape& first = in.instruction.shape.IsTuple() ? in.instruction.shape.tuple_shapes.at(0)
                                                      : in.instruction.shape;
  std::vector<dsl::Array> results = Results(in, n, first.dimensions);
  Dims window_dims;
  for (const WindowDimension& w : window)
    window_dims.push_back(w.size);
  const Dims strides = Strides(dims);
  int64_t flat = 0;
  ForEachIndex(first.dimensions, [&](const Dims& out) {
    std::vector<dsl::Array> accumulators = inits;
    ForEachIndex(window_dims, [&](const Dims& k) {
      int64_t offset = 0;
      for (size_t d = 0; d < dims.size(); ++d) {
        // The position in the base dilated by base_dilation and padded.
        const int64_t dilated =
            out[d] * window[d].stride - window[d].padding_low + k[d] * window[d].window_dilation;
        if (dilated < 0 || dilated % window[d].base_dilation != 0) return;
        const int64_t position = dilated / window[d].base_dilation;
        if (position >= dims[d]) return;
        offset += position * strides[d];
      }
      Accumulate(reducer, inputs, offset, accumulators);
    });
    Store(accumulators, results, flat++, in.instruction);
  });
  return Pack(std::move(results), in.instruction.shape);
}

Value Sort(const OpInput& in) {
  if (in.operands.empty()) Fail(in.instruction, "it needs an operand");
  const std::vector<const dsl::Array*> inputs = Arrays(in, 0, in.operands.size());
  const int comparator = in.Called("to_apply");
  const Dims& dims = inputs[0]->shape();
  const std::vector<int64_t> dimension = in.IntList("dimensions");
  if (dimension.size() != 1 || dimension[0] < 0 ||
      dimension[0] >= static_cast<int64_t>(dims.size()))
    Fail(in.instruction, "dimensions should name one dimension of its operands");
  const auto d = static_cast<size_t>(dimension[0]);
  const int64_t length = dims[d], stride = Strides(dims)[d];
  std::vector<dsl::Array> results;
  for (const dsl::Array* input : inputs)
    results.push_back(NewArray(input->dtype(), dims));
  Dims outer = dims;
  outer[d] = 1;
  const Dims strides = Strides(dims);
  ForEachIndex(outer, [&](const Dims& index) {
    int64_t base = 0;
    for (size_t i = 0; i < index.size(); ++i)
      base += index[i] * strides[i];
    std::vector<std::vector<dsl::Array>> keys(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k)
      for (int64_t j = 0; j < length; ++j)
        keys[k].push_back(ElementOf(*inputs[k], base + j * stride));
    std::vector<int64_t> order(static_cast<size_t>(length));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      std::vector<Value> arguments;
      for (size_t k = 0; k < inputs.size(); ++k) {
        arguments.push_back(Value::Of(keys[k][static_cast<size_t>(a)]));
        arguments.push_back(Value::Of(keys[k][static_cast<size_t>(b)]));
      }
      const Value less = in.call(comparator, std::move(arguments));
      if (less.is_tuple || less.array.dtype() != dsl::DType::kBool || less.array.size() != 1)
        Fail(in.instruction, "its comparator should return a pred scalar");
      return GetInt(less.array, 0) != 0;
    });
    for (size_t k = 0; k < inputs.size(); ++k)
      for (int64_t j = 0; j < length; ++j)
        CopyElement(*inputs[k], base + order[static_cast<size_t>(j)] * stride, results[k],
                    base + j * stride);
  });
  return Pack(std::move(results), in.instruction.shape);
}

Value Map(const OpInput& in) {
  if (in.operands.empty()) Fail(in.instruction, "it needs an operand");
  const std::vector<const dsl::Array*> inputs = Arrays(in, 0, in.operands.size());
  const int computation = in.Called("to_apply");
  dsl::Array out = NewArray(ResultDType(in.instruction), inputs[0]->shape());
  for (int64_t i = 0; i < out.size(); ++i) {
    std::vector<Value> arguments;
    for (const dsl::Array* input : inputs)
      arguments.push_back(Value::Of(ElementOf(*input, i)));
    const Value result = in.call(computation, std::move(arguments));
    if (result.is_tuple || result.array.dtype() != out.dtype() || result.array.size() != 1)
      Fail(in.instruction, "its computation should return one scalar of its result type");
    CopyElement(result.array, 0, out, i);
  }
  return Value::Of(std::move(out));
}

}  // namespace

void AddReduceOps(OpTable& table) {
  table["reduce"] = Reduce;
  table["reduce-window"] = ReduceWindow;
  table["sort"] = Sort;
  table["map"] = Map;
}

}  // namespace tpusim::hlo::reference
