#pragma once

// Scalar numerics of the elementwise program ops, as XLA defines them: integers wrap to
// their width, float-to-integer conversion saturates (NaN to 0), integer division by zero
// gives -1 and its remainder the dividend, min and max propagate NaN.

#include <cstdint>
#include <string>

#include "dsl/array.h"

namespace tpusim::dsl {

using BinaryFloatFn = double (*)(double, double);
// Exact in int64 on sign-extended operands of `bits` width; the caller wraps the result.
using BinaryIntFn = int64_t (*)(int64_t, int64_t, int bits);

int BitWidth(DType dtype);  // 1 for bool
// `v` wrapped to `dtype`'s width (two's complement; unsigned for uint32, 0/1 for bool).
int64_t WrapInteger(int64_t v, DType dtype);
// `v` converted as XLA's convert does: round to the float dtype, or saturate to the integer
// dtype's range (NaN to 0), or nonzero to true.
double ConvertValue(double v, DType dtype);
// Stores `v` as element i: floats round, integers are converted by ConvertValue.
void StoreElement(Array& out, int64_t i, double v);

enum class CompareDirection { kEq, kNe, kLt, kLe, kGt, kGe };
// "EQ", "NE", "LT", "LE", "GT", "GE"; throws Error(kInvalidArgument) naming `op` otherwise.
CompareDirection ParseComparison(const std::string& op, const std::string& direction);
bool Compares(CompareDirection direction, double a, double b);

double SignOf(double x);
double Logistic(double x);
double MinPropagatingNan(double a, double b);
double MaxPropagatingNan(double a, double b);
int64_t IntegerDivide(int64_t a, int64_t b, int bits);
int64_t IntegerRemainder(int64_t a, int64_t b, int bits);
int64_t IntegerPower(int64_t a, int64_t b, int bits);
int64_t ShiftLeft(int64_t a, int64_t b, int bits);
int64_t ShiftRightArithmetic(int64_t a, int64_t b, int bits);
int64_t ShiftRightLogical(int64_t a, int64_t b, int bits);

}  // namespace tpusim::dsl
