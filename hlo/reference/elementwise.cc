// Elementwise operations, after XLA's operation semantics: floats are computed in double and
// rounded to f32 and then to the result type (XLA computes bf16 and f16 in f32); integers
// are computed in 64 bits and wrap to their width; integer division by zero gives -1 (all
// bits set) and remainder by zero the dividend; maximum and minimum propagate NaN.

#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

namespace {

using RealUnary = double (*)(double);
using IntUnary = int64_t (*)(int64_t, dsl::DType);
using RealBinary = double (*)(double, double);
using IntBinary = int64_t (*)(int64_t, int64_t, dsl::DType);

uint64_t Bits(int64_t value, dsl::DType dtype) {
  const int bits = BitsOf(dtype);
  const auto u = static_cast<uint64_t>(value);
  return bits >= 64 ? u : u & ((uint64_t{1} << bits) - 1);
}

int64_t Signed(int64_t value, dsl::DType dtype) {
  const int bits = BitsOf(dtype);
  if (bits >= 64) return value;
  const uint64_t u = Bits(value, dtype), sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>(u ^ sign) - static_cast<int64_t>(sign);
}

int64_t Wrap(uint64_t value) {
  return static_cast<int64_t>(value);
}

double Sign(double x) {
  return std::isnan(x) ? x : std::copysign(x != 0 ? 1.0 : 0.0, x);
}

const std::unordered_map<std::string, RealUnary>& RealUnaries() {
  static const std::unordered_map<std::string, RealUnary> table = {
      {"abs", [](double x) { return std::fabs(x); }},
      {"negate", [](double x) { return -x; }},
      {"sign", Sign},
      {"exponential", [](double x) { return std::exp(x); }},
      {"exponential-minus-one", [](double x) { return std::expm1(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log-plus-one", [](double x) { return std::log1p(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"logistic", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }},
      {"cbrt", [](double x) { return std::cbrt(x); }},
      {"sine", [](double x) { return std::sin(x); }},
      {"cosine", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"round-nearest-afz", [](double x) { return std::round(x); }},
      {"round-nearest-even", [](double x) { return std::nearbyint(x); }},
  };
  return table;
}

const std::unordered_map<std::string, IntUnary>& IntUnaries() {
  static const std::unordered_map<std::string, IntUnary> table = {
      {"abs", [](int64_t x, dsl::DType) { return x < 0 ? Wrap(0 - static_cast<uint64_t>(x)) : x; }},
      {"negate", [](int64_t x, dsl::DType) { return Wrap(0 - static_cast<uint64_t>(x)); }},
      {"sign", [](int64_t x, dsl::DType) { return int64_t{(x > 0) - (x < 0)}; }},
      {"not",
       [](int64_t x, dsl::DType t) { return t == dsl::DType::kBool ? int64_t{x == 0} : ~x; }},
      {"popcnt", [](int64_t x, dsl::DType t) { return int64_t{__builtin_popcountll(Bits(x, t))}; }},
      {"count-leading-zeros",
       [](int64_t x, dsl::DType t) {
         const uint64_t u = Bits(x, t);
         return int64_t{BitsOf(t)} - (u == 0 ? 0 : 64 - __builtin_clzll(u));
       }},
  };
  return table;
}

double Maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

double Minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

double Power(double a, double b) {
  return a == 1 || b == 0 ? 1 : std::pow(a, b);
}

const std::unordered_map<std::string, RealBinary>& RealBinaries() {
  static const std::unordered_map<std::string, RealBinary> table = {
      {"add", [](double a, double b) { return a + b; }},
      {"subtract", [](double a, double b) { return a - b; }},
      {"multiply", [](double a, double b) { return a * b; }},
      {"divide", [](double a, double b) { return a / b; }},
      {"remainder", [](double a, double b) { return std::fmod(a, b); }},
      {"maximum", Maximum},
      {"minimum", Minimum},
      {"power", Power},
      {"atan2", [](double a, double b) { return std::atan2(a, b); }},
  };
  return table;
}

int64_t IntDivide(int64_t a, int64_t b, dsl::DType) {
  if (b == 0) return -1;
  if (b == -1 && a == std::numeric_limits<int64_t>::min()) return a;  // s64 wraps
  return a / b;  // s32 MIN / -1 is 2^31 here and wraps when stored
}

int64_t IntRemainder(int64_t a, int64_t b, dsl::DType) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}

int64_t IntPower(int64_t a, int64_t b, dsl::DType) {
  if (b < 0) return a == 1 ? 1 : 0;
  uint64_t result = 1, base = static_cast<uint64_t>(a);
  for (auto e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return Wrap(result);
}

// A shift by the type's width or more (or by a negative amount) shifts everything out.
bool ShiftsOut(int64_t amount, dsl::DType t) {
  return Bits(amount, t) >= uint64_t(BitsOf(t));
}

int64_t ShiftLeft(int64_t a, int64_t b, dsl::DType t) {
  return ShiftsOut(b, t) ? 0 : Wrap(static_cast<uint64_t>(a) << b);
}

int64_t ShiftRightLogical(int64_t a, int64_t b, dsl::DType t) {
  return ShiftsOut(b, t) ? 0 : Wrap(Bits(a, t) >> b);
}

int64_t ShiftRightArithmetic(int64_t a, int64_t b, dsl::DType t) {
  const int64_t value = Signed(a, t);
  if (ShiftsOut(b, t)) return value < 0 ? -1 : 0;
  return value >> b;
}

const std::unordered_map<std::string, IntBinary>& IntBinaries() {
  static const std::unordered_map<std::string, IntBinary> table = {
      {"add", [](int64_t a, int64_t b,
                 dsl::DType) { return Wrap(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }},
      {"subtract",
       [](int64_t a, int64_t b, dsl::DType) {
         return Wrap(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
       }},
      {"multiply",
       [](int64_t a, int64_t b, dsl::DType) {
         return Wrap(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
       }},
      {"divide", IntDivide},
      {"remainder", IntRemainder},
      {"maximum", [](int64_t a, int64_t b, dsl::DType) { return a > b ? a : b; }},
      {"minimum", [](int64_t a, int64_t b, dsl::DType) { return a < b ? a : b; }},
      {"power", IntPower},
      {"and", [](int64_t a, int64_t b, dsl::DType) { return a & b; }},
      {"or", [](int64_t a, int64_t b, dsl::DType) { return a | b; }},
      {"xor", [](int64_t a, int64_t b, dsl::DType) { return a ^ b; }},
      {"shift-left", ShiftLeft},
      {"shift-right-logical", ShiftRightLogical},
      {"shift-right-arithmetic", ShiftRightArithmetic},
  };
  return table;
}

std::string TypeName(dsl::DType dtype) {
  return std::string(PrimitiveTypeName(TypeOf(dtype)));
}

void ExpectType(const OpInput& in, const dsl::Array& operand, dsl::DType expected) {
  if (operand.dtype() != expected) {
    Fail(in.instruction, "its operands are " + TypeName(operand.dtype()) + " and its result " +
                             TypeName(expected) + "; they should be of one element type");
  }
}

// Element i of an operand that is either the result's size or a scalar broadcast to it.
int64_t At(const dsl::Array& operand, int64_t i) {
  return operand.size() == 1 ? 0 : i;
}

void ExpectSize(const OpInput& in, const dsl::Array& operand, int64_t size, bool scalar_ok) {
  if (operand.size() == size || (scalar_ok && operand.shape().empty())) return;
  Fail(in.instruction, "an operand has shape " + dsl::ShapeString(operand.shape()) + " where " +
                           std::to_string(size) + " elements are expected");
}

Value Unary(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  const std::string& op = in.instruction.opcode;
  dsl::Array out = NewArray(ResultDType(in.instruction), x.shape());
  if (op == "is-finite") {
    if (!IsFloat(x.dtype())) Fail(in.instruction, "is-finite takes a floating-point operand");
    for (int64_t i = 0; i < x.size(); ++i)
      SetInt(out, i, std::isfinite(GetReal(x, i)) ? 1 : 0);
    return Value::Of(std::move(out));
  }
  ExpectType(in, x, out.dtype());
  if (IsFloat(x.dtype())) {
    const auto found = RealUnaries().find(op);
    if (found == RealUnaries().end())
      Fail(in.instruction, op + " is not defined on " + TypeName(x.dtype()));
    for (int64_t i = 0; i < x.size(); ++i)
      SetReal(out, i, found->second(GetReal(x, i)));
  } else {
    const auto found = IntUnaries().find(op);
    if (found == IntUnaries().end())
      Fail(in.instruction, op + " is not defined on " + TypeName(x.dtype()));
    for (int64_t i = 0; i < x.size(); ++i)
      SetInt(out, i, found->second(GetInt(x, i), x.dtype()));
  }
  return Value::Of(std::move(out));
}

Value Binary(const OpInput& in) {
  in.ExpectOperands(2);
  const dsl::Array &a = in.Array(0), &b = in.Array(1);
  dsl::Array out = NewArray(ResultDType(in.instruction), in.instruction.shape.dimensions);
  ExpectType(in, a, out.dtype());
  ExpectType(in, b, out.dtype());
  ExpectSize(in, a, out.size(), true);
  ExpectSize(in, b, out.size(), true);
  if (!ApplyBinary(in.instruction.opcode, a, b, out))
    Fail(in.instruction, in.instruction.opcode + " is not defined on " + TypeName(a.dtype()));
  return Value::Of(std::move(out));
}

// IEEE order, or TOTALORDER's: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalOrderKey(double x) {
  int64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
}

template <typename T>
bool Compare(ComparisonDirection direction, T a, T b) {
  switch (direction) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kLt:
      return a < b;
    case ComparisonDirection::kLe:
      return a <= b;
    case ComparisonDirection::kGt:
      return a > b;
    case ComparisonDirection::kGe:
      return a >= b;
  }
  return false;
}

Value CompareOp(const OpInput& in) {
  in.ExpectOperands(2);
  const dsl::Array &a = in.Array(0), &b = in.Array(1);
  const ComparisonDirection direction =
      DecodeComparisonDirection(in.instruction.GetAttribute("direction"));
  const Attribute* type = in.instruction.FindAttribute("comparison_type");
  const bool total = type && DecodeString(*type) == "TOTALORDER";
  dsl::Array out = NewArray(ResultDType(in.instruction), in.instruction.shape.dimensions);
  ExpectType(in, b, a.dtype());
  ExpectSize(in, a, out.size(), true);
  ExpectSize(in, b, out.size(), true);
  for (int64_t i = 0; i < out.size(); ++i) {
    bool result;
    if (!IsFloat(a.dtype())) {
      result = Compare(direction, GetInt(a, At(a, i)), GetInt(b, At(b, i)));
    } else if (total) {
      result = Compare(direction, TotalOrderKey(GetReal(a, At(a, i))),
                       TotalOrderKey(GetReal(b, At(b, i))));
    } else {
      result = Compare(direction, GetReal(a, At(a, i)), GetReal(b, At(b, i)));
    }
    SetInt(out, i, result ? 1 : 0);
  }
  return Value::Of(std::move(out));
}

Value Select(const OpInput& in) {
  in.ExpectOperands(3);
  const dsl::Array &pred = in.Array(0), &on_true = in.Array(1), &on_false = in.Array(2);
  dsl::Array out = NewArray(ResultDType(in.instruction), in.instruction.shape.dimensions);
  if (pred.dtype() != dsl::DType::kBool) Fail(in.instruction, "its first operand should be pred");
  ExpectType(in, on_true, out.dtype());
  ExpectType(in, on_false, out.dtype());
  ExpectSize(in, pred, out.size(), true);
  ExpectSize(in, on_true, out.size(), false);
  ExpectSize(in, on_false, out.size(), false);
  for (int64_t i = 0; i < out.size(); ++i)
    CopyElement(GetInt(pred, At(pred, i)) != 0 ? on_true : on_false, i, out, i);
  return Value::Of(std::move(out));
}

Value Clamp(const OpInput& in) {
  in.ExpectOperands(3);
  const dsl::Array &low = in.Array(0), &x = in.Array(1), &high = in.Array(2);
  dsl::Array out = NewArray(ResultDType(in.instruction), x.shape());
  for (const dsl::Array* operand : {&low, &x, &high}) {
    ExpectType(in, *operand, out.dtype());
    ExpectSize(in, *operand, out.size(), operand != &x);
  }
  for (int64_t i = 0; i < out.size(); ++i) {
    if (IsFloat(x.dtype())) {
      SetReal(
          out, i,
          Minimum(Maximum(GetReal(x, i), GetReal(low, At(low, i))), GetReal(high, At(high, i))));
    } else {
      const int64_t lo = GetInt(low, At(low, i)), hi = GetInt(high, At(high, i));
      SetInt(out, i, std::min(std::max(GetInt(x, i), lo), hi));
    }
  }
  return Value::Of(std::move(out));
}

Value Convert(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  dsl::Array out = NewArray(ResultDType(in.instruction), x.shape());
  for (int64_t i = 0; i < x.size(); ++i) {
    if (IsFloat(x.dtype())) {
      SetConverted(out, i, GetReal(x, i));
    } else {
      SetInt(out, i, GetInt(x, i));  // integers wrap; to floats one rounding via f32
    }
  }
  return Value::Of(std::move(out));
}

Value BitcastConvert(const OpInput& in) {
  in.ExpectOperands(1);
  const dsl::Array& x = in.Array(0);
  const dsl::DType dtype = ResultDType(in.instruction);
  if (dsl::SizeOf(dtype) != dsl::SizeOf(x.dtype()) || in.instruction.shape.dimensions != x.shape())
    Fail(in.instruction, "only a bitcast-convert between types of one width is modelled");
  dsl::Array out = NewArray(dtype, x.shape());
  out.bytes() = x.bytes();
  return Value::Of(std::move(out));
}

}  // namespace

bool ApplyBinary(const std::string& opcode, const dsl::Array& a, const dsl::Array& b,
                 dsl::Array& out) {
  const int64_t n = out.size();
  if (IsFloat(a.dtype())) {
    const auto found = RealBinaries().find(opcode);
    if (found == RealBinaries().end()) return false;
    for (int64_t i = 0; i < n; ++i)
      SetReal(out, i, found->second(GetReal(a, At(a, i)), GetReal(b, At(b, i))));
  } else {
    const auto found = IntBinaries().find(opcode);
    if (found == IntBinaries().end()) return false;
    for (int64_t i = 0; i < n; ++i)
      SetInt(out, i, found->second(GetInt(a, At(a, i)), GetInt(b, At(b, i)), a.dtype()));
  }
  return true;
}

void AddElementwiseOps(OpTable& table) {
  for (const auto& [name, unused] : RealUnaries())
    table[name] = Unary;
  for (const auto& [name, unused] : IntUnaries())
    table[name] = Unary;
  table["is-finite"] = Unary;
  for (const auto& [name, unused] : RealBinaries())
    table[name] = Binary;
  for (const auto& [name, unused] : IntBinaries())
    table[name] = Binary;
  table["compare"] = CompareOp;
  table["select"] = Select;
  table["clamp"] = Clamp;
  table["convert"] = Convert;
  table["bitcast-convert"] = BitcastConvert;
}

}  // namespace tpusim::hlo::reference
