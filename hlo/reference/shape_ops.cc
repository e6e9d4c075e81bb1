// Operations that move elements without computing on them (broadcast, reshape, bitcast,
// transpose, slices, concatenate, pad, reverse, iota), constants, tuples, device ids and the
// pass-through opcodes. Elements are copied as bytes, so every type moves exactly.

#include <algorithm>
#include <cmath>

#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

namespace {

int64_t OffsetOf(const Dims& index, const Dims& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d)
    offset += index[d] * strides[d];
  return offset;
}

bool IsPermutation(const std::vector<int64_t>& list) {
  std::vector<bool> seen(list.size(), false);
  for (const int64_t d : list) {
    if (d < 0 || d >= static_cast<int64_t>(list.size()) || seen[static_cast<size_t>(d)])
      return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

const Dims& ResultDims(const OpInput& in) {
  return in.instruction.shape.dimensions;
}

void ExpectRank(const OpInput& in, const std::vector<int64_t>& list, size_t rank,
                const std::string& attribute) {
  if (list.size() != rank) {
    Fail(in.instruction, attribute + " has " + std::to_string(list.size()) +
                             " entries; it should have one per dimension (" + std::to_string(rank) +
                             ")");
  }
}

Value Broadcast(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  const std::vector<int64_t> dims = in.IntList("dimensions");
  ExpectRank(in, dims, x.shape().size(), "dimensions");
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(out.shape().size()) ||
        out.shape()[static_cast<size_t>(dims[i])] != x.shape()[i])
      Fail(in.instruction, "dimensions does not map its operand's dimensions onto equal ones");
  }
  const Dims strides = Strides(x.shape());
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](const Dims& index) {
    int64_t offset = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      offset += index.at(static_cast<size_t>(dims[i])) * strides[i];
    CopyElement(x, offset, out, flat++);
  });
  return Value::Of(std::move(out));
}

Value Reshape(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  if (out.size() != x.size() || out.dtype() != x.dtype()) {
    Fail(in.instruction,
         "its operand " + Describe(x) + " does not hold the elements of its result");
  }
  out.bytes() = x.bytes();
  return Value::Of(std::move(out));
}

// The row-major (logical) offsets of an array's elements in the order its layout stores
// them: minor_to_major {1,0} is row-major, {0,1} column-major. Tiling is not modelled.
std::vector<int64_t> PhysicalOrder(const Shape& shape) {
  const Dims& dims = shape.dimensions;
  std::vector<int64_t> major_to_minor(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    major_to_minor[d] = static_cast<int64_t>(d);
  if (shape.layout && shape.layout->minor_to_major.size() == dims.size() &&
      IsPermutation(shape.layout->minor_to_major))
    major_to_minor.assign(shape.layout->minor_to_major.rbegin(),
                          shape.layout->minor_to_major.rend());
  Dims physical_dims;
  for (const int64_t d : major_to_minor)
    physical_dims.push_back(dims.at(static_cast<size_t>(d)));
  const Dims strides = Strides(dims);
  std::vector<int64_t> order;
  ForEachIndex(physical_dims, [&](const Dims& index) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i)
      offset += index[i] * strides[static_cast<size_t>(major_to_minor[i])];
    order.push_back(offset);
  });
  return order;
}

// XLA's bitcast reinterprets the bytes as laid out in memory: with row-major layouts it is
// a reshape; otherwise element k of the operand's storage is element k of the result's.
Value Bitcast(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  if (out.nbytes() != x.nbytes()) {
    Fail(in.instruction, "its operand " + Describe(x) + " has another byte size than its result");
  }
  if (out.dtype() != x.dtype()) {
    out.bytes() = x.bytes();
    return Value::Of(std::move(out));
  }
  const std::vector<int64_t> from = PhysicalOrder(in.OperandInstruction(0).shape);
  const std::vector<int64_t> to = PhysicalOrder(in.instruction.shape);
  for (size_t k = 0; k < from.size(); ++k)
    CopyElement(x, from[k], out, to[k]);
  return Value::Of(std::move(out));
}

Value Transpose(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  const std::vector<int64_t> permutation = in.IntList("dimensions");
  ExpectRank(in, permutation, x.shape().size(), "dimensions");
  if (!IsPermutation(permutation)) Fail(in.instruction, "dimensions is not a permutation");
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  for (size_t i = 0; i < permutation.size(); ++i)
    if (out.shape().size() != permutation.size() ||
        out.shape()[i] != x.shape()[static_cast<size_t>(permutation[i])])
      Fail(in.instruction, "its shape is not its operand's permuted by dimensions");
  const Dims strides = Strides(x.shape());
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](const Dims& index) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i)
      offset += index[i] * strides.at(static_cast<size_t>(permutation[i]));
    CopyElement(x, offset, out, flat++);
  });
  return Value::Of(std::move(out));
}

Value Slice(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  const std::vector<SliceRange> ranges = DecodeSlice(in.instruction.GetAttribute("slice"));
  if (ranges.size() != x.shape().size())
    Fail(in.instruction, "slice needs one range per dimension");
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  for (size_t d = 0; d < ranges.size(); ++d) {
    const SliceRange& r = ranges[d];
    if (r.start < 0 || r.start > r.limit || r.limit > x.shape()[d] || r.stride < 1 ||
        out.shape().size() != ranges.size() ||
        out.shape()[d] != (r.limit - r.start + r.stride - 1) / r.stride)
      Fail(in.instruction,
           "its range " + std::to_string(d) + " does not fit its operand and result");
  }
  const Dims strides = Strides(x.shape());
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](const Dims& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d)
      offset += (ranges[d].start + index[d] * ranges[d].stride) * strides[d];
    CopyElement(x, offset, out, flat++);
  });
  return Value::Of(std::move(out));
}

// The start indices of a dynamic slice (one scalar operand per dimension, from operand
// `first` on), each clamped so that a box of `sizes` stays inside `dims`.
Dims ClampedStarts(const OpInput& in, size_t first, const Dims& dims, const Dims& sizes) {
  if (in.operands.size() != first + dims.size())
    Fail(in.instruction, "it needs one scalar start index per operand dimension");
  Dims starts(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const dsl::Array& start = in.Array(first + d);
    if (start.size() != 1 || IsFloat(start.dtype()))
      Fail(in.instruction, "its start indices should be integer scalars");
    if (sizes[d] > dims[d]) Fail(in.instruction, "its slice is larger than its operand");
    starts[d] = std::clamp<int64_t>(GetInt(start, 0), 0, dims[d] - sizes[d]);
  }
  return starts;
}

Value DynamicSlice(const OpInput& in) {
  const dsl::Array& x = in.Array(0);
  const Dims& sizes = ResultDims(in);
  if (sizes.size() != x.shape().size()) Fail(in.instruction, "its rank differs from its operand's");
  const Dims starts = ClampedStarts(in, 1, x.shape(), sizes);
  dsl::Array out = NewArray(ResultDType(in.instruction), sizes);
  if (out.dtype() != x.dtype()) Fail(in.instruction, "its element type differs from its operand's");
  if (out.size() > 0) out.bytes() = x.Slice(starts, sizes).bytes();
  return Value::Of(std::move(out));
}

Value DynamicUpdateSlice(const OpInput& in) {
  const dsl::Array &x = in.Array(0), &update = in.Array(1);
  if (update.shape().size() != x.shape().size() || update.dtype() != x.dtype())
    Fail(in.instruction, "its update should have its operand's rank and element type");
  const Dims starts = ClampedStarts(in, 2, x.shape(), update.shape());
  dsl::Array out = x;
  if (update.size() > 0) out.Place(update, starts);
  return Value::Of(std::move(out));
}

Value Concatenate(const OpInput& in) {
  const std::vector<int64_t> dims = in.IntList("dimensions");
  if (dims.size() != 1) Fail(in.instruction, "dimensions should name one dimension");
  const auto d = static_cast<size_t>(dims[0]);
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  Dims offsets(out.shape().size(), 0);
  for (size_t i = 0; i < in.operands.size(); ++i) {
    const dsl::Array& part = in.Array(i);
    bool fits = part.shape().size() == out.shape().size() && d < out.shape().size() &&
                offsets[d] + part.shape()[d] <= out.shape()[d] && part.dtype() == out.dtype();
    for (size_t k = 0; fits && k < out.shape().size(); ++k)
      fits = k == d || part.shape()[k] == out.shape()[k];
    if (!fits) Fail(in.instruction, "its operands do not fit its result");
    if (part.size() > 0) out.Place(part, offsets);
    offsets[d] += part.shape()[d];
  }
  if (d >= out.shape().size() || offsets[d] != out.shape()[d])
    Fail(in.instruction, "its operands do not fit its result");
  return Value::Of(std::move(out));
}

Value Pad(const OpInput& in) {
  in.ExpectOperands(2);
  const dsl::Array &x = in.Array(0), &padding_value = in.Array(1);
  const std::vector<PaddingDimension> padding =
      DecodePadding(in.instruction.GetAttribute("padding"));
  if (padding.size() != x.shape().size())
    Fail(in.instruction, "padding needs one entry per dimension");
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  for (size_t d = 0; d < padding.size(); ++d) {
    const int64_t n = x.shape()[d];
    const PaddingDimension& p = padding[d];
    if (p.interior < 0 || out.shape().size() != padding.size() ||
        out.shape()[d] != p.low + p.high + n + std::max<int64_t>(n - 1, 0) * p.interior)
      Fail(in.instruction, "its padding " + std::to_string(d) + " does not give its result's size");
  }
  if (padding_value.size() != 1 || padding_value.dtype() != out.dtype())
    Fail(in.instruction, "its padding value should be a scalar of its element type");
  for (int64_t i = 0; i < out.size(); ++i)
    CopyElement(padding_value, 0, out, i);
  const Dims strides = Strides(out.shape());
  int64_t flat = 0;
  ForEachIndex(x.shape(), [&](const Dims& index) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < index.size(); ++d) {
      const int64_t position = padding[d].low + index[d] * (padding[d].interior + 1);
      inside = inside && position >= 0 && position < out.shape()[d];
      offset += position * strides[d];
    }
    if (inside) CopyElement(x, flat, out, offset);
    ++flat;
  });
  return Value::Of(std::move(out));
}

Value Reverse(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  const std::vector<int64_t> reversed = in.IntList("dimensions");
  for (const int64_t d : reversed)
    if (d < 0 || d >= static_cast<int64_t>(x.shape().size()))
      Fail(in.instruction, "dimensions names " + std::to_string(d) + ", outside its operand");
  dsl::Array out = NewArray(ResultDType(in.instruction), x.shape());
  const Dims strides = Strides(x.shape());
  int64_t flat = 0;
  ForEachIndex(x.shape(), [&](Dims index) {
    for (const int64_t d : reversed)
      index.at(static_cast<size_t>(d)) = x.shape()[static_cast<size_t>(d)] - 1 - index[d];
    CopyElement(x, OffsetOf(index, strides), out, flat++);
  });
  return Value::Of(std::move(out));
}

Value Iota(const OpInput& in) {
  const int64_t dimension = DecodeInt(in.instruction.GetAttribute("iota_dimension"));
  dsl::Array out = NewArray(ResultDType(in.instruction), ResultDims(in));
  if (dimension < 0 || dimension >= static_cast<int64_t>(out.shape().size()))
    Fail(in.instruction, "iota_dimension is outside its shape");
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](const Dims& index) {
    SetInt(out, flat++, index[static_cast<size_t>(dimension)]);
  });
  return Value::Of(std::move(out));
}

Value Constant(const OpInput& in) {
  const Instruction& instruction = in.instruction;
  if (instruction.literal_elided) {
    Fail(instruction,
         "its literal is elided ({...}); print the module with its large "
         "constants (XLA's HloPrintOptions print_large_constants)");
  }
  dsl::Array out = NewArray(ResultDType(instruction), ResultDims(in));
  if (static_cast<int64_t>(instruction.literal_values.size()) != out.size()) {
    Fail(instruction, "its literal has more than " + std::to_string(kMaxDecodedLiteralElements) +
                          " elements, which the parser keeps as text only");
  }
  for (int64_t i = 0; i < out.size(); ++i) {
    const double value = instruction.literal_values[static_cast<size_t>(i)];
    if (IsFloat(out.dtype())) {
      SetReal(out, i, value);
    } else {
      SetConverted(out, i, value);
    }
  }
  return Value::Of(std::move(out));
}

Value FirstOperand(const OpInput& in) {
  if (in.operands.empty()) Fail(in.instruction, "it needs an operand");
  return *in.operands[0];
}

Value TupleOp(const OpInput& in) {
  std::vector<Value> elements;
  for (const Value* operand : in.operands)
    elements.push_back(*operand);
  return Value::Tuple(std::move(elements));
}

Value TupleElement(const Value& tuple, int64_t index, const Instruction& instruction) {
  if (!tuple.is_tuple || index < 0 || index >= static_cast<int64_t>(tuple.elements.size()))
    Fail(instruction, "its operand has no tuple element " + std::to_string(index));
  return tuple.elements[static_cast<size_t>(index)];
}

Value GetTupleElement(const OpInput& in) {
  in.ExpectOperands(1);
  return TupleElement(*in.operands[0], in.instruction.tuple_index, in.instruction);
}

// *-done of an asynchronous pair whose start value is (operands, result, contexts...).
Value AsyncResult(const OpInput& in) {
  in.ExpectOperands(1);
  return TupleElement(*in.operands[0], 1, in.instruction);
}

Value DeviceId(const OpInput& in, bool replica) {
  dsl::Array out = NewArray(ResultDType(in.instruction), {});
  const int64_t partitions = in.module.num_partitions;
  SetInt(out, 0, replica ? in.device / partitions : in.device % partitions);
  return Value::Of(std::move(out));
}

Value CustomCall(const OpInput& in) {
  const Attribute* target = in.instruction.FindAttribute("custom_call_target");
  const std::string name = target ? DecodeString(*target) : "";
  if (name != "Sharding") {
    Fail(in.instruction, "the custom-call target '" + name +
                             "' is not modelled (only Sharding, an annotation, is)");
  }
  return FirstOperand(in);
}

}  // namespace

void AddShapeOps(OpTable& table) {
  table["broadcast"] = Broadcast;
  table["reshape"] = Reshape;
  table["bitcast"] = Bitcast;
  table["transpose"] = Transpose;
  table["slice"] = Slice;
  table["dynamic-slice"] = DynamicSlice;
  table["dynamic-update-slice"] = DynamicUpdateSlice;
  table["concatenate"] = Concatenate;
  table["pad"] = Pad;
  table["reverse"] = Reverse;
  table["iota"] = Iota;
  table["constant"] = Constant;
  table["tuple"] = TupleOp;
  table["get-tuple-element"] = GetTupleElement;
  table["partition-id"] = [](const OpInput& in) { return DeviceId(in, false); };
  table["replica-id"] = [](const OpInput& in) { return DeviceId(in, true); };
  table["after-all"] = [](const OpInput&) { return Value::Tuple({}); };
  // Pass-through: copies, ordering and scheduling hints, and the second half of pairs whose
  // first half already holds the result.
  for (const char* name :
       {"copy", "add-dependency", "opt-barrier", "all-reduce-done", "async-update", "domain"})
    table[name] = FirstOperand;
  for (const char* name : {"all-gather-done", "collective-permute-done", "async-done", "copy-done"})
    table[name] = AsyncResult;
  table["copy-start"] = [](const OpInput& in) {
    Value start = Zeros(in.instruction, in.instruction.shape);
    if (!start.is_tuple || start.elements.size() < 2)
      Fail(in.instruction, "its result should be a tuple");
    start.elements[0] = start.elements[1] = FirstOperand(in);
    return start;
  };
  table["custom-call"] = CustomCall;
}

}  // namespace tpusim::hlo::reference
