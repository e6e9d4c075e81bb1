// Elementwise program ops beyond add, multiply and max (jax.lax names; XLA's HLO opcodes map
// onto them in hlo/): unary math, binary arithmetic and logic, compare, select, clamp. Each
// is described by its numerics and its work (dsl/program/op_registry.h): operands and results
// through HBM once, one VPU operation per element (a few for transcendentals).
//
// Numerics are XLA's: integer arithmetic wraps to the dtype's width, division by zero gives
// -1 (and the remainder the dividend), float results round once to the dtype.

#include <cmath>
#include <limits>

#include "dsl/program/array_index.h"
#include "dsl/program/elementwise_numerics.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

// VPU operations per element: a transcendental takes several VPU passes (a polynomial);
// 8 is a modelling choice (docs/time-model.md) and never binds an HBM-bound op.
constexpr double kTranscendentalOps = 8;

XlaWork ElementwiseWork(const OpTyping& t, const std::vector<ShapeDtype>& results, double per) {
  XlaWork work = MemoryBoundWork(t, results);
  work.vector_ops *= per;
  return work;
}

using UnaryFn = double (*)(double);

OpDef Unary(const std::string& name, const std::string& summary, UnaryFn fn, bool transcendental,
            bool floats_only = true, bool to_bool = false) {
  OpDef def;
  def.name = name;
  def.summary = summary;
  def.shape = [name, floats_only, to_bool](const OpTyping& t) {
    const ShapeDtype& x = t.operands[0];
    if (floats_only && !IsFloating(x.dtype)) {
      ThrowOpError(t.op, "takes a floating-point operand (bf16, f16, f32), got " + Type(x) +
                             "; convert it first (astype).");
    }
    return std::vector<ShapeDtype>{{x.shape, to_bool ? DType::kBool : x.dtype}};
  };
  def.compute = [fn](const OpCompute& c) {
    const Array& x = c.operands[0];
    Array out(c.results[0].shape, c.results[0].dtype);
    for (int64_t i = 0; i < x.size(); ++i)
      StoreElement(out, i, fn(x.GetFlat(i)));
    return std::vector<Array>{out};
  };
  const double per = transcendental ? kTranscendentalOps : 1;
  def.work = [per](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    return ElementwiseWork(t, r, per);
  };
  return def;
}

std::vector<ShapeDtype> SameTypes(const OpTyping& t) {
  const ShapeDtype& a = t.operands[0];
  for (size_t i = 1; i < t.operands.size(); ++i) {
    const ShapeDtype& b = t.operands[i];
    if (a.shape != b.shape || a.dtype != b.dtype) {
      ThrowOpError(t.op, "the operands are " + Type(a) + " and " + Type(b) +
                             ", but an elementwise op needs one shape and one dtype (no "
                             "broadcasting or promotion); broadcast or convert one of them.");
    }
  }
  return {a};
}

// A binary op: `float_fn` for floats, `int_fn` (exact, in int64, then wrapped) for integers
// and bools; either may be null when the op does not take that kind.
OpDef Binary(const std::string& name, const std::string& summary, BinaryFloatFn float_fn,
             BinaryIntFn int_fn, bool transcendental = false) {
  OpDef def;
  def.name = name;
  def.summary = summary;
  def.min_operands = def.max_operands = 2;
  def.shape = [float_fn, int_fn](const OpTyping& t) {
    std::vector<ShapeDtype> out = SameTypes(t);
    const bool floating = IsFloating(out[0].dtype);
    if ((floating && !float_fn) || (!floating && !int_fn)) {
      ThrowOpError(t.op, std::string("does not take ") + (floating ? "floating-point" : "integer") +
                             " operands, got " + Type(out[0]) + ".");
    }
    return out;
  };
  def.compute = [float_fn, int_fn](const OpCompute& c) {
    const Array &a = c.operands[0], &b = c.operands[1];
    Array out(c.results[0].shape, c.results[0].dtype);
    if (IsFloating(a.dtype())) {
      for (int64_t i = 0; i < a.size(); ++i)
        StoreElement(out, i, float_fn(a.GetFlat(i), b.GetFlat(i)));
    } else {
      for (int64_t i = 0; i < a.size(); ++i) {
        const auto x = static_cast<int64_t>(a.GetFlat(i));
        const auto y = static_cast<int64_t>(b.GetFlat(i));
        StoreElement(
            out, i, static_cast<double>(WrapInteger(int_fn(x, y, BitWidth(a.dtype())), a.dtype())));
      }
    }
    return std::vector<Array>{out};
  };
  const double per = transcendental ? kTranscendentalOps : 1;
  def.work = [per](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    return ElementwiseWork(t, r, per);
  };
  return def;
}

OpDef Compare() {
  OpDef def;
  def.name = "compare";
  def.summary = "a <direction> b elementwise, a bool array (lax.eq, lt, ...; HLO compare)";
  def.min_operands = def.max_operands = 2;
  def.attributes = {AttrSpec::Of(base::Param::String("direction", "EQ, NE, LT, LE, GT or GE"))};
  def.shape = [](const OpTyping& t) {
    SameTypes(t);
    ParseComparison(t.op, t.attrs.at("direction").AsString());
    return std::vector<ShapeDtype>{{t.operands[0].shape, DType::kBool}};
  };
  def.compute = [](const OpCompute& c) {
    const CompareDirection direction = ParseComparison(c.op, c.attrs.at("direction").AsString());
    const Array &a = c.operands[0], &b = c.operands[1];
    Array out(c.results[0].shape, DType::kBool);
    for (int64_t i = 0; i < a.size(); ++i)
      out.SetFlat(i, Compares(direction, a.GetFlat(i), b.GetFlat(i)) ? 1 : 0);
    return std::vector<Array>{out};
  };
  return def;
}

// pred may be a scalar (chooses whole arrays) or the operands' shape.
OpDef Select() {
  OpDef def;
  def.name = "select";
  def.summary = "on_true where pred, else on_false (lax.select; HLO select)";
  def.min_operands = def.max_operands = 3;
  def.shape = [](const OpTyping& t) {
    const ShapeDtype &pred = t.operands[0], &a = t.operands[1], &b = t.operands[2];
    if (pred.dtype != DType::kBool || (!pred.shape.empty() && pred.shape != a.shape)) {
      ThrowOpError(t.op, "pred is " + Type(pred) +
                             ", but it must be bool, of the operands' shape " +
                             ShapeString(a.shape) + " or a scalar.");
    }
    if (a.shape != b.shape || a.dtype != b.dtype) {
      ThrowOpError(t.op, "on_true is " + Type(a) + " and on_false " + Type(b) +
                             "; give both one shape and one dtype.");
    }
    return std::vector<ShapeDtype>{a};
  };
  def.compute = [](const OpCompute& c) {
    const Array &pred = c.operands[0], &a = c.operands[1], &b = c.operands[2];
    Array out = b;
    const bool scalar = pred.size() == 1 && pred.shape().empty();
    for (int64_t i = 0; i < a.size(); ++i) {
      if (pred.GetFlat(scalar ? 0 : i) != 0) out.SetFlat(i, a.GetFlat(i));
    }
    return std::vector<Array>{out};
  };
  return def;
}

// lo and hi may be scalars.
OpDef Clamp() {
  OpDef def;
  def.name = "clamp";
  def.summary = "min(max(x, lo), hi) elementwise (lax.clamp(lo, x, hi))";
  def.min_operands = def.max_operands = 3;
  def.shape = [](const OpTyping& t) {
    const ShapeDtype &lo = t.operands[0], &x = t.operands[1], &hi = t.operands[2];
    for (const ShapeDtype* bound : {&lo, &hi}) {
      if (bound->dtype != x.dtype || (!bound->shape.empty() && bound->shape != x.shape)) {
        ThrowOpError(t.op, "a bound is " + Type(*bound) + " but x is " + Type(x) +
                               "; bounds must have x's dtype and be scalars or of x's shape.");
      }
    }
    return std::vector<ShapeDtype>{x};
  };
  def.compute = [](const OpCompute& c) {
    const Array &lo = c.operands[0], &x = c.operands[1], &hi = c.operands[2];
    Array out(x.shape(), x.dtype());
    for (int64_t i = 0; i < x.size(); ++i) {
      const double l = lo.GetFlat(lo.size() == 1 ? 0 : i);
      const double h = hi.GetFlat(hi.size() == 1 ? 0 : i);
      out.SetFlat(i, std::min(std::max(x.GetFlat(i), l), h));
    }
    return std::vector<Array>{out};
  };
  return def;
}

OpDef Not() {
  OpDef def;
  def.name = "not";
  def.summary = "logical not (bool) or bitwise not (integers)";
  def.shape = [](const OpTyping& t) {
    if (IsFloating(t.operands[0].dtype)) {
      ThrowOpError(t.op, "takes a bool or integer operand, got " + Type(t.operands[0]) + ".");
    }
    return std::vector<ShapeDtype>{t.operands[0]};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    Array out(x.shape(), x.dtype());
    for (int64_t i = 0; i < x.size(); ++i) {
      const auto v = static_cast<int64_t>(x.GetFlat(i));
      out.SetFlat(i,
                  static_cast<double>(WrapInteger(x.dtype() == DType::kBool ? !v : ~v, x.dtype())));
    }
    return std::vector<Array>{out};
  };
  return def;
}

OpDef ConvertElementType() {
  OpDef def;
  def.name = "convert_element_type";
  def.summary =
      "x as new_dtype: floats round to nearest even, float to integer saturates "
      "(NaN to 0), as XLA's convert";
  def.attributes = {AttrSpec::Of(DTypeAttr("new_dtype", "the result's dtype"))};
  def.shape = [](const OpTyping& t) {
    return std::vector<ShapeDtype>{{t.operands[0].shape, t.attrs.at("new_dtype").AsDType()}};
  };
  def.compute = [](const OpCompute& c) {
    const Array& x = c.operands[0];
    Array out(x.shape(), c.results[0].dtype);
    for (int64_t i = 0; i < x.size(); ++i)
      out.SetFlat(i, ConvertValue(x.GetFlat(i), out.dtype()));
    return std::vector<Array>{out};
  };
  return def;
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& registry) {
  registry.Add(Unary(
      "neg", "-x", [](double x) { return -x; }, false, false));
  registry.Add(Unary(
      "abs", "|x|", [](double x) { return std::abs(x); }, false, false));
  registry.Add(Unary("sign", "-1, 0 or 1 (NaN stays NaN)", SignOf, false, false));
  registry.Add(Unary(
      "exp", "e^x", [](double x) { return std::exp(x); }, true));
  registry.Add(Unary(
      "expm1", "e^x - 1", [](double x) { return std::expm1(x); }, true));
  registry.Add(Unary(
      "log", "ln x", [](double x) { return std::log(x); }, true));
  registry.Add(Unary(
      "log1p", "ln(1 + x)", [](double x) { return std::log1p(x); }, true));
  registry.Add(Unary(
      "tanh", "tanh x", [](double x) { return std::tanh(x); }, true));
  registry.Add(Unary("logistic", "1 / (1 + e^-x)", Logistic, true));
  registry.Add(Unary(
      "sqrt", "sqrt x", [](double x) { return std::sqrt(x); }, true));
  registry.Add(Unary(
      "rsqrt", "1 / sqrt x", [](double x) { return 1 / std::sqrt(x); }, true));
  registry.Add(Unary(
      "cbrt", "cube root", [](double x) { return std::cbrt(x); }, true));
  registry.Add(Unary(
      "sin", "sin x", [](double x) { return std::sin(x); }, true));
  registry.Add(Unary(
      "cos", "cos x", [](double x) { return std::cos(x); }, true));
  registry.Add(Unary(
      "tan", "tan x", [](double x) { return std::tan(x); }, true));
  registry.Add(Unary(
      "erf", "the error function", [](double x) { return std::erf(x); }, true));
  registry.Add(Unary(
      "floor", "round down", [](double x) { return std::floor(x); }, false));
  registry.Add(Unary(
      "ceil", "round up", [](double x) { return std::ceil(x); }, false));
  registry.Add(Unary(
      "round", "to nearest, halves away from zero", [](double x) { return std::round(x); }, false));
  registry.Add(Unary(
      "round_nearest_even", "to nearest, halves to even",
      [](double x) { return std::nearbyint(x); }, false));
  registry.Add(Unary(
      "is_finite", "neither inf nor NaN, as bool",
      [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }, false, true, true));
  registry.Add(Not());
  registry.Add(Binary(
      "sub", "a - b", [](double a, double b) { return a - b; },
      [](int64_t a, int64_t b, int) { return a - b; }));
  registry.Add(Binary(
      "div", "a / b (integers: toward zero; by zero: -1)", [](double a, double b) { return a / b; },
      IntegerDivide));
  registry.Add(Binary(
      "rem", "remainder of a / b, the sign of a (by zero: a)",
      [](double a, double b) { return std::fmod(a, b); }, IntegerRemainder));
  registry.Add(Binary("min", "min(a, b), NaN if either is", MinPropagatingNan,
                      [](int64_t a, int64_t b, int) { return a < b ? a : b; }));
  registry.Add(Binary(
      "pow", "a^b", [](double a, double b) { return std::pow(a, b); }, IntegerPower, true));
  registry.Add(Binary(
      "atan2", "atan(a / b), in the right quadrant",
      [](double a, double b) { return std::atan2(a, b); }, nullptr, true));
  registry.Add(Binary("and", "logical / bitwise and", nullptr,
                      [](int64_t a, int64_t b, int) { return a & b; }));
  registry.Add(Binary("or", "logical / bitwise or", nullptr,
                      [](int64_t a, int64_t b, int) { return a | b; }));
  registry.Add(Binary("xor", "logical / bitwise exclusive or", nullptr,
                      [](int64_t a, int64_t b, int) { return a ^ b; }));
  registry.Add(Binary("shift_left", "a << b (0 when b is out of range)", nullptr, ShiftLeft));
  registry.Add(
      Binary("shift_right_arithmetic", "a >> b, sign-filling", nullptr, ShiftRightArithmetic));
  registry.Add(Binary("shift_right_logical", "a >> b, zero-filling (of the dtype's width)", nullptr,
                      ShiftRightLogical));
  registry.Add(Compare());
  registry.Add(Select());
  registry.Add(Clamp());
  registry.Add(ConvertElementType());
}

}  // namespace tpusim::dsl
