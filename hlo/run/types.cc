#include "hlo/run/types.h"

#include "base/errors.h"

namespace tpusim::hlo::run {

std::optional<dsl::DType> DTypeOf(PrimitiveType type) {
  using dsl::DType;
  switch (type) {
    case PrimitiveType::kPred:
      return DType::kBool;
    case PrimitiveType::kS8:
      return DType::kInt8;
    case PrimitiveType::kS32:
      return DType::kInt32;
    case PrimitiveType::kU32:
      return DType::kUInt32;
    case PrimitiveType::kS64:
      return DType::kInt64;
    case PrimitiveType::kF16:
      return DType::kF16;
    case PrimitiveType::kBF16:
      return DType::kBF16;
    case PrimitiveType::kF32:
      return DType::kF32;
    // Stand-ins of the same width: the time is right, the numbers are not modelled.
    case PrimitiveType::kU8:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kS2:
    case PrimitiveType::kU2:
    case PrimitiveType::kS1:
    case PrimitiveType::kU1:
    case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E8M0FNU:
      return DType::kInt8;
    case PrimitiveType::kS16:
    case PrimitiveType::kU16:
      return DType::kF16;
    case PrimitiveType::kU64:
    case PrimitiveType::kF64:
      return DType::kInt64;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
      return std::nullopt;
  }
  return std::nullopt;
}

bool HasNumerics(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS32:
    case PrimitiveType::kU32:
    case PrimitiveType::kS64:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
      return true;
    default:
      return false;
  }
}

dsl::ShapeDtype TypeOf(const Shape& shape, const std::string& what) {
  if (!shape.IsArray()) {
    throw Error(ErrorKind::kInvalidArgument,
                what + " is " + shape.ToString(false) + ", where an array was expected.");
  }
  for (int64_t d : shape.dimensions) {
    if (d < 0) {
      throw Error(ErrorKind::kInvalidArgument,
                  what + " is " + shape.ToString(false) +
                      ", whose size is unknown (an unbounded dynamic dimension); tpusim needs "
                      "static shapes or bounds.");
    }
  }
  const auto dtype = DTypeOf(shape.element_type);
  if (!dtype) {
    throw Error(ErrorKind::kInvalidArgument, what + " is " + shape.ToString(false) +
                                                 ": complex element types are not modelled.");
  }
  return {dsl::Shape(shape.dimensions.begin(), shape.dimensions.end()), *dtype};
}

}  // namespace tpusim::hlo::run
