#include "dsl/dtype.h"

#include "base/errors.h"

namespace tpusim::dsl {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kInt32:
      return "int32";
    case DType::kInt8:
      return "int8";
    case DType::kBool:
      return "bool";
    case DType::kUInt32:
      return "uint32";
    case DType::kInt64:
      return "int64";
    case DType::kF16:
      return "f16";
  }
  return "?";
}

bool IsFloating(DType dtype) {
  return dtype == DType::kBF16 || dtype == DType::kF32 || dtype == DType::kF16;
}

std::optional<DType> FindDType(const std::string& name) {
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "f32" || name == "float32") return DType::kF32;
  if (name == "int32" || name == "i32") return DType::kInt32;
  if (name == "int8" || name == "i8") return DType::kInt8;
  if (name == "bool" || name == "pred") return DType::kBool;
  if (name == "uint32" || name == "u32") return DType::kUInt32;
  if (name == "int64" || name == "i64") return DType::kInt64;
  if (name == "f16" || name == "float16") return DType::kF16;
  return std::nullopt;
}

DType ParseDType(const std::string& name) {
  if (const auto dtype = FindDType(name)) return *dtype;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown dtype '" + name + "'; use one of bf16, f32, int32, int8.");
}

std::optional<Precision> FindPrecision(const std::string& name) {
  if (name == "DEFAULT" || name == "default" || name == "bfloat16") return Precision::kDefault;
  if (name == "HIGH" || name == "high" || name == "bfloat16_3x") return Precision::kHigh;
  if (name == "HIGHEST" || name == "highest" || name == "float32") return Precision::kHighest;
  return std::nullopt;
}

Precision ParsePrecision(const std::string& name) {
  if (const auto precision = FindPrecision(name)) return *precision;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown precision '" + name +
                  "'; use DEFAULT (one bf16 pass), HIGH (three) or HIGHEST (six), as "
                  "jax.lax.Precision.");
}

base::MxuInput MxuInputOf(DType operands) {
  switch (operands) {
    case DType::kBF16:
    case DType::kF16:
      return base::MxuInput::kBF16;
    case DType::kF32:
      return base::MxuInput::kF32;
    case DType::kInt8:
      return base::MxuInput::kInt8;
    case DType::kInt32:
    case DType::kBool:
    case DType::kUInt32:
    case DType::kInt64:
      return base::MxuInput::kInt32;
  }
  return base::MxuInput::kBF16;
}

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kDefault:
      return "DEFAULT";
    case Precision::kHigh:
      return "HIGH";
    case Precision::kHighest:
      return "HIGHEST";
  }
  return "?";
}

}  // namespace tpusim::dsl
