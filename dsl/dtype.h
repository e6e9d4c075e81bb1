#pragma once

// Element types. bf16 uses Eigen's bfloat16 (round to nearest even), so host numerics
// round the way the hardware does.

#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <string>

#include "base/work.h"

namespace tpusim::dsl {

// kBool, kUInt32, kInt64 and kF16 exist for XLA programs (pred masks, partition-id,
// indices); the kernels and the MXU take the first four.
enum class DType { kBF16, kF32, kInt32, kInt8, kBool, kUInt32, kInt64, kF16 };

using bf16 = Eigen::bfloat16;

// Inline: every DMA asks, for its two regions and its byte count.
constexpr int SizeOf(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kBF16:
    case DType::kF16:
      return 2;
    case DType::kF32:
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kInt64:
      return 8;
  }
  return 1;
}
const char* DTypeName(DType dtype);  // "bf16", "f32", "int32", "int8", "bool", ...
bool IsFloating(DType dtype);        // bf16, f16, f32
// Throws Error(kInvalidArgument) naming the accepted spellings.
DType ParseDType(const std::string& name);
// The same without the error: nullopt for a name that is not a dtype.
std::optional<DType> FindDType(const std::string& name);

// jax.lax.Precision, as the work a kernel or program describes carries it (base/work.h).
using Precision = base::Precision;
const char* PrecisionName(Precision precision);  // "DEFAULT", "HIGH", "HIGHEST"
// "DEFAULT", "HIGH", "HIGHEST" (also JAX's aliases "bfloat16", "bfloat16_3x", "float32");
// throws Error(kInvalidArgument) naming the accepted spellings.
Precision ParsePrecision(const std::string& name);
// The same without the error: nullopt for a name that is not a precision.
std::optional<Precision> FindPrecision(const std::string& name);

// How the MXU takes a dot of `operands` (the dtype a dot runs in, after promotion): f16 as
// bf16 (no f16 path is published), integers beyond int8 on int32's path.
base::MxuInput MxuInputOf(DType operands);

}  // namespace tpusim::dsl
