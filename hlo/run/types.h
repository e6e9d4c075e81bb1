#pragma once

// HLO element types and shapes as the program layer's dtypes and types. XLA has more element
// types than the program layer computes with; those run timing-only, on a stand-in dtype of
// the same width, and NumericsGap says why.

#include <optional>
#include <string>

#include "dsl/array.h"
#include "hlo/shape.h"

namespace tpusim::hlo::run {

// The dtype an array of `type` is held as: its own (pred bool, s8, s32, u32, s64, f16, bf16,
// f32), or a stand-in of the same width (u8 as int8, s16/u16 as f16, u64 as int64, f64 as
// int64, the 8-bit floats as int8...). nullopt for complex and sub-byte types wider than a
// stand-in can hold.
std::optional<dsl::DType> DTypeOf(PrimitiveType type);
// True when the dtype holds `type`'s values exactly (no stand-in): its numerics are modelled.
bool HasNumerics(PrimitiveType type);

// An array shape as a program type; throws Error(kInvalidArgument) naming `what` for a tuple,
// a token, an unbounded dynamic dimension or an element type with no dtype.
dsl::ShapeDtype TypeOf(const Shape& shape, const std::string& what);

}  // namespace tpusim::hlo::run
