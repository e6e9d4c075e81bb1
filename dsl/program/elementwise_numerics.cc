#include "dsl/program/elementwise_numerics.h"

#include <cmath>
#include <limits>

#include "base/errors.h"

namespace tpusim::dsl {

int BitWidth(DType dtype) {
  return dtype == DType::kBool ? 1 : SizeOf(dtype) * 8;
}

int64_t WrapInteger(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return v != 0 ? 1 : 0;
    case DType::kInt8:
      return static_cast<int8_t>(static_cast<uint8_t>(v & 0xff));
    case DType::kInt32:
      return static_cast<int32_t>(static_cast<uint32_t>(v & 0xffffffff));
    case DType::kUInt32:
      return static_cast<int64_t>(static_cast<uint32_t>(v & 0xffffffff));
    default:
      return v;
  }
}

namespace {

double Saturate(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  return std::trunc(std::min(std::max(v, lo), hi));
}

}  // namespace

double ConvertValue(double v, DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return v != 0 ? 1 : 0;
    case DType::kInt8:
      return Saturate(v, -128, 127);
    case DType::kInt32:
      return Saturate(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    case DType::kUInt32:
      return Saturate(v, 0, std::numeric_limits<uint32_t>::max());
    case DType::kInt64:
      // The largest double below 2^63: int64's range as far as a double can hold it.
      return Saturate(v, -9223372036854775808.0, 9223372036854774784.0);
    default:
      return v;
  }
}

void StoreElement(Array& out, int64_t i, double v) {
  out.SetFlat(i, ConvertValue(v, out.dtype()));
}

CompareDirection ParseComparison(const std::string& op, const std::string& direction) {
  if (direction == "EQ") return CompareDirection::kEq;
  if (direction == "NE") return CompareDirection::kNe;
  if (direction == "LT") return CompareDirection::kLt;
  if (direction == "LE") return CompareDirection::kLe;
  if (direction == "GT") return CompareDirection::kGt;
  if (direction == "GE") return CompareDirection::kGe;
  throw Error(ErrorKind::kInvalidArgument, op + ": unknown comparison direction '" + direction +
                                               "'; use EQ, NE, LT, LE, GT or GE.");
}

bool Compares(CompareDirection direction, double a, double b) {
  switch (direction) {
    case CompareDirection::kEq:
      return a == b;
    case CompareDirection::kNe:
      return a != b;
    case CompareDirection::kLt:
      return a < b;
    case CompareDirection::kLe:
      return a <= b;
    case CompareDirection::kGt:
      return a > b;
    case CompareDirection::kGe:
      return a >= b;
  }
  return false;
}

double SignOf(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}

double Logistic(double x) {
  return 1 / (1 + std::exp(-x));
}

double MinPropagatingNan(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

double MaxPropagatingNan(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

int64_t IntegerDivide(int64_t a, int64_t b, int bits) {
  if (b == 0) return -1;
  // INT_MIN / -1 overflows: XLA gives INT_MIN, which wrapping the exact result also gives.
  if (b == -1) return bits >= 64 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : -a;
  return a / b;
}

int64_t IntegerRemainder(int64_t a, int64_t b, int) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}

int64_t IntegerPower(int64_t a, int64_t b, int) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 == 0 ? 1 : -1) : 0;
  uint64_t result = 1, base = static_cast<uint64_t>(a);
  for (; b > 0; b >>= 1) {
    if (b & 1) result *= base;
    base *= base;
  }
  return static_cast<int64_t>(result);
}

int64_t ShiftLeft(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}

int64_t ShiftRightArithmetic(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
  return a >> b;
}

int64_t ShiftRightLogical(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return 0;
  const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  return static_cast<int64_t>((static_cast<uint64_t>(a) & mask) >> b);
}

}  // namespace tpusim::dsl
