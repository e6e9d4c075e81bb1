#include "hlo/reference/value.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tpusim::hlo::reference {

Value Value::Of(dsl::Array array) {
  Value value;
  value.array = std::move(array);
  return value;
}

Value Value::Tuple(std::vector<Value> elements) {
  Value value;
  value.is_tuple = true;
  value.elements = std::move(elements);
  return value;
}

std::optional<dsl::DType> ModelledDType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return dsl::DType::kBool;
    case PrimitiveType::kS8:
      return dsl::DType::kInt8;
    case PrimitiveType::kS32:
      return dsl::DType::kInt32;
    case PrimitiveType::kU32:
      return dsl::DType::kUInt32;
    case PrimitiveType::kS64:
      return dsl::DType::kInt64;
    case PrimitiveType::kF16:
      return dsl::DType::kF16;
    case PrimitiveType::kBF16:
      return dsl::DType::kBF16;
    case PrimitiveType::kF32:
      return dsl::DType::kF32;
    default:
      return std::nullopt;
  }
}

PrimitiveType TypeOf(dsl::DType dtype) {
  switch (dtype) {
    case dsl::DType::kBool:
      return PrimitiveType::kPred;
    case dsl::DType::kInt8:
      return PrimitiveType::kS8;
    case dsl::DType::kInt32:
      return PrimitiveType::kS32;
    case dsl::DType::kUInt32:
      return PrimitiveType::kU32;
    case dsl::DType::kInt64:
      return PrimitiveType::kS64;
    case dsl::DType::kF16:
      return PrimitiveType::kF16;
    case dsl::DType::kBF16:
      return PrimitiveType::kBF16;
    case dsl::DType::kF32:
      return PrimitiveType::kF32;
  }
  return PrimitiveType::kF32;
}

void Fail(const Instruction& instruction, const std::string& reason) {
  throw Error(ErrorKind::kInvalidArgument, "%" + instruction.name + " (" + instruction.opcode +
                                               " at " + instruction.location.ToString() +
                                               ") cannot be evaluated: " + reason + ".");
}

void CheckModelled(const Instruction& instruction, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes)
      CheckModelled(instruction, element);
  } else if (shape.IsArray() && !ModelledDType(shape.element_type)) {
    Fail(instruction, "its element type " + std::string(PrimitiveTypeName(shape.element_type)) +
                          " is not modelled (the reference evaluator models " + kModelledTypes +
                          ")");
  }
}

dsl::DType ResultDType(const Instruction& instruction) {
  if (!instruction.shape.IsArray()) Fail(instruction, "its result should be an array");
  CheckModelled(instruction, instruction.shape);
  return *ModelledDType(instruction.shape.element_type);
}

dsl::Array NewArray(dsl::DType dtype, const Dims& dims) {
  const uint64_t bytes = static_cast<uint64_t>(dsl::NumElements(dims)) * dsl::SizeOf(dtype);
  constexpr uint64_t kCheckedBytes = uint64_t{1} << 20;
  if (bytes > kCheckedBytes)
    dsl::RequireHostMemory(bytes, "the array " + dsl::TypeString(dtype, dims));
  dsl::Array array = dsl::Array::Placeholder(dims, dtype);
  array.bytes().assign(bytes, 0);
  return array;
}

Value Zeros(const Instruction& instruction, const Shape& shape) {
  if (shape.IsToken()) return Value::Tuple({});
  if (shape.IsTuple()) {
    std::vector<Value> elements;
    for (const Shape& element : shape.tuple_shapes)
      elements.push_back(Zeros(instruction, element));
    return Value::Tuple(std::move(elements));
  }
  CheckModelled(instruction, shape);
  return Value::Of(NewArray(*ModelledDType(shape.element_type), shape.dimensions));
}

bool IsFloat(dsl::DType dtype) {
  return dsl::IsFloating(dtype);
}

int BitsOf(dsl::DType dtype) {
  return dtype == dsl::DType::kBool ? 1 : 8 * dsl::SizeOf(dtype);
}

bool IsUnsigned(dsl::DType dtype) {
  return dtype == dsl::DType::kBool || dtype == dsl::DType::kUInt32;
}

int64_t GetInt(const dsl::Array& array, int64_t i) {
  const uint8_t* p = array.data() + i * dsl::SizeOf(array.dtype());
  switch (array.dtype()) {
    case dsl::DType::kBool:
      return *p != 0 ? 1 : 0;
    case dsl::DType::kInt8:
      return static_cast<int8_t>(*p);
    case dsl::DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case dsl::DType::kUInt32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case dsl::DType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case dsl::DType::kBF16:
    case dsl::DType::kF16:
    case dsl::DType::kF32:
      break;
  }
  return static_cast<int64_t>(array.GetFlat(i));
}

void SetInt(dsl::Array& array, int64_t i, int64_t value) {
  if (IsFloat(array.dtype())) {
    // One rounding to f32, as XLA converts integers to floats.
    array.SetFlat(i, static_cast<double>(static_cast<float>(value)));
    return;
  }
  uint8_t* p = array.data() + i * dsl::SizeOf(array.dtype());
  if (array.dtype() == dsl::DType::kBool) {
    *p = value != 0 ? 1 : 0;
    return;
  }
  const auto bits = static_cast<uint64_t>(value);  // little-endian: the low bytes come first
  std::memcpy(p, &bits, static_cast<size_t>(dsl::SizeOf(array.dtype())));
}

double GetReal(const dsl::Array& array, int64_t i) {
  if (IsFloat(array.dtype())) return array.GetFlat(i);
  return static_cast<double>(GetInt(array, i));
}

void SetReal(dsl::Array& array, int64_t i, double value) {
  array.SetFlat(i, static_cast<double>(static_cast<float>(value)));
}

void SetConverted(dsl::Array& array, int64_t i, double value) {
  const dsl::DType dtype = array.dtype();
  if (IsFloat(dtype)) {
    SetReal(array, i, value);
  } else if (dtype == dsl::DType::kBool) {
    SetInt(array, i, value != 0 ? 1 : 0);
  } else if (std::isnan(value)) {
    SetInt(array, i, 0);
  } else {
    const int bits = BitsOf(dtype);
    const double low = IsUnsigned(dtype) ? 0 : -std::ldexp(1.0, bits - 1);
    const double high = IsUnsigned(dtype) ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
    if (value <= low) {
      SetInt(array, i, static_cast<int64_t>(low));
    } else if (value >= high) {  // the largest value is high - 1
      SetInt(array, i,
             bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(high) - 1);
    } else {
      SetInt(array, i, static_cast<int64_t>(std::trunc(value)));
    }
  }
}

void CopyElement(const dsl::Array& from, int64_t i, dsl::Array& to, int64_t j) {
  const int size = dsl::SizeOf(from.dtype());
  std::memcpy(to.data() + j * size, from.data() + i * size, static_cast<size_t>(size));
}

dsl::Array ElementOf(const dsl::Array& array, int64_t i) {
  dsl::Array element = NewArray(array.dtype(), {});
  CopyElement(array, i, element, 0);
  return element;
}

Dims Strides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t d = dims.size(); d > 1; --d)
    strides[d - 2] = strides[d - 1] * dims[d - 1];
  return strides;
}

std::string Describe(const dsl::Array& array) {
  std::string text = std::string(PrimitiveTypeName(TypeOf(array.dtype()))) + "[";
  for (size_t d = 0; d < array.shape().size(); ++d) {
    if (d > 0) text += ',';
    text += std::to_string(array.shape()[d]);
  }
  return text + "]";
}

std::string Describe(const Value& value) {
  if (!value.is_tuple) return Describe(value.array);
  std::string text = "(";
  for (size_t i = 0; i < value.elements.size(); ++i) {
    if (i > 0) text += ", ";
    text += Describe(value.elements[i]);
  }
  return text + ")";
}

namespace {

bool Fits(const Shape& shape, const Value& value) {
  if (shape.IsToken()) return value.is_tuple && value.elements.empty();
  if (shape.IsTuple()) {
    if (!value.is_tuple || value.elements.size() != shape.tuple_shapes.size()) return false;
    for (size_t i = 0; i < value.elements.size(); ++i)
      if (!Fits(shape.tuple_shapes[i], value.elements[i])) return false;
    return true;
  }
  return !value.is_tuple && ModelledDType(shape.element_type) == value.array.dtype() &&
         value.array.shape() == shape.dimensions;
}

}  // namespace

void CheckResult(const Instruction& instruction, const Value& value) {
  if (!Fits(instruction.shape, value)) {
    Fail(instruction, "it computes " + Describe(value) + " where its shape is " +
                          instruction.shape.ToString(false) +
                          " (its operands or attributes do not fit its shape)");
  }
}

void Flatten(const Value& value, std::vector<dsl::Array>& out) {
  if (!value.is_tuple) {
    out.push_back(value.array);
    return;
  }
  for (const Value& element : value.elements)
    Flatten(element, out);
}

}  // namespace tpusim::hlo::reference
