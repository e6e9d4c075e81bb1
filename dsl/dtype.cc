#include "dsl/dtype.h"

#include "base/errors.h"

namespace tpusim::dsl {

int SizeOf(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return 2;
    case DType::kF32:
      return 4;
    case DType::kInt32:
      return 4;
    case DType::kInt8:
      return 1;
  }
  return 1;
}

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
  }
  return "?";
}

DType ParseDType(const std::string& name) {
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "f32" || name == "float32") return DType::kF32;
  if (name == "int32" || name == "i32") return DType::kInt32;
  if (name == "int8" || name == "i8") return DType::kInt8;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown dtype '" + name + "'; use one of bf16, f32, int32, int8.");
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
