#pragma once

// The MXU's numerics on the host: what a dot computes, bit for bit as far as the model
// goes, shared by a kernel's dot (dsl/compute.cc) and a program's dot
// (dsl/program/array_ops.cc) so the two agree.
//
// - bf16 operands: exact bf16 x bf16 products accumulated in f32.
// - f32 operands: split into bf16 pieces, as many products as the precision's passes
//   (DEFAULT: one pass, so the operands are rounded to bf16; HIGH three; HIGHEST six),
//   the small terms summed first (docs/references.md §1, "Matmul precision").
// - int8 / int32 operands: exact integer products, accumulated modulo 2^32 as int32
//   hardware wraps.

#include <Eigen/Core>

#include "dsl/array.h"
#include "dsl/dtype.h"

namespace tpusim::dsl {

// Host matrices of an array's values in f32 (row-major, as arrays are laid out), and back
// with one rounding to the array's dtype; the VPU's elementwise ops use them too.
using HostMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
HostMatrix ToHostMatrix(const Array& a, int64_t rows, int64_t cols);
void FromHostMatrix(const HostMatrix& m, Array& out);

// a [M, K] @ b [K, N] (+ *accumulator, [M, N]) with operands in the dtype `operands` (the
// promoted dtype of a and b), rounded once into a [M, N] array of dtype `result`.
Array MxuMatmul(const Array& a, const Array& b, DType operands, Precision precision, DType result,
                const Array* accumulator = nullptr);

}  // namespace tpusim::dsl
