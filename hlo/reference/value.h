#pragma once

// What the reference evaluator computes with: a Value (an array, or a tuple of values; a
// token is an empty tuple), the element types it models, element access by raw bytes
// (integers exactly, wrapped to their width; floats through double) and row-major index
// walks. Nothing here comes from the simulated ops (dsl/program/, kernels/): the evaluator
// is the independent check of their numerics.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "hlo/module.h"

namespace tpusim::hlo::reference {

using Dims = std::vector<int64_t>;

struct Value {
  bool is_tuple = false;
  dsl::Array array;             // when !is_tuple
  std::vector<Value> elements;  // when is_tuple

  static Value Of(dsl::Array array);
  static Value Tuple(std::vector<Value> elements);
};

// The dsl::DType that holds `type`, for the element types the evaluator models (pred, s8,
// s32, u32, s64, f16, bf16, f32), or nothing.
std::optional<dsl::DType> ModelledDType(PrimitiveType type);
PrimitiveType TypeOf(dsl::DType dtype);
inline constexpr const char* kModelledTypes = "pred, s8, s32, u32, s64, f16, bf16 and f32";

// Throws tpusim::Error (kInvalidArgument) naming the instruction, its opcode and its place
// in the file: "%dot (dot at m.hlo:5:3) cannot be evaluated: REASON." REASON is a clause
// without the final period.
[[noreturn]] void Fail(const Instruction& instruction, const std::string& reason);
// Fails unless every array in `shape` has a modelled element type.
void CheckModelled(const Instruction& instruction, const Shape& shape);
// The dsl::DType of the instruction's (array) result.
dsl::DType ResultDType(const Instruction& instruction);

// A zero-filled array (host memory is checked first only for large ones: scalars are made
// per element by reducers and must stay cheap).
dsl::Array NewArray(dsl::DType dtype, const Dims& dims);
// Zeros of every array in `shape`; tokens are empty tuples.
Value Zeros(const Instruction& instruction, const Shape& shape);

bool IsFloat(dsl::DType dtype);
int BitsOf(dsl::DType dtype);
bool IsUnsigned(dsl::DType dtype);  // pred and u32

// Integers (and pred, as 0/1) exactly: sign- or zero-extended to 64 bits.
int64_t GetInt(const dsl::Array& array, int64_t i);
// Stores the low bits of `value` (two's complement wrap to the type's width; pred: != 0).
void SetInt(dsl::Array& array, int64_t i, int64_t value);
// Any element as a double (s64 beyond 2^53 rounds).
double GetReal(const dsl::Array& array, int64_t i);
// A floating-point element: `value` rounded to f32 first, then (bf16, f16) to nearest
// even, as XLA computes narrow floats in f32.
void SetReal(dsl::Array& array, int64_t i, double value);
// XLA's convert of `value` into any modelled type: floats round to nearest even; integers
// truncate toward zero and saturate, NaN becomes 0; pred is value != 0.
void SetConverted(dsl::Array& array, int64_t i, double value);
// Copies one element's bytes (same dtype).
void CopyElement(const dsl::Array& from, int64_t i, dsl::Array& to, int64_t j);
// Element i as a scalar array.
dsl::Array ElementOf(const dsl::Array& array, int64_t i);

// Row-major strides of `dims`.
Dims Strides(const Dims& dims);
// Calls visit(index) for every index of `dims` in row-major order (none when one is 0).
template <typename Visit>
void ForEachIndex(const Dims& dims, Visit&& visit) {
  for (const int64_t d : dims) {
    if (d <= 0) return;
  }
  Dims index(dims.size(), 0);
  while (true) {
    visit(static_cast<const Dims&>(index));
    size_t d = dims.size();
    while (d > 0) {
      --d;
      if (++index[d] < dims[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (dims.empty()) return;
  }
}

// "f32[2,3]", "(f32[2], s32[])": what an error says a value is.
std::string Describe(const Value& value);
std::string Describe(const dsl::Array& array);
// Fails unless `value` has `shape` (element types and dimensions, recursively; a token is
// an empty tuple): what `instruction` computed must be what its shape says.
void CheckResult(const Instruction& instruction, const Value& value);

// Appends every array of `value` (a tuple flattened in order, tokens dropped) to `out`.
void Flatten(const Value& value, std::vector<dsl::Array>& out);

}  // namespace tpusim::hlo::reference
