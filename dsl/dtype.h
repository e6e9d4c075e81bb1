#pragma once

// Element types. bf16 uses Eigen's bfloat16 (round to nearest even), so host numerics
// round the way the hardware does.

#include <Eigen/Core>
#include <cstdint>
#include <string>

namespace tpusim::dsl {

enum class DType { kBF16, kF32, kInt32, kInt8 };

using bf16 = Eigen::bfloat16;

int SizeOf(DType dtype);
const char* DTypeName(DType dtype);  // "bf16", "f32", "int32", "int8"
// Throws Error(kInvalidArgument) naming the accepted spellings.
DType ParseDType(const std::string& name);

enum class Precision { kDefault, kHigh, kHighest };
const char* PrecisionName(Precision precision);  // "DEFAULT", "HIGH", "HIGHEST"

}  // namespace tpusim::dsl
