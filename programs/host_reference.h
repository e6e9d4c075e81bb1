#pragma once

// What the example programs share: random operands (or timing-only placeholders), host
// matrices in double precision (Eigen) rounded once to an output dtype, and the
// tolerances the programs' roundings allow.

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "dsl/mesh.h"

namespace tpusim::programs {

using HostMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The operands of a matmul problem: bf16 a [m, k] and b [k, n], inputs 0 and 1 of
// kernels::EntryInput (placeholders when not functional).
std::vector<dsl::Array> MatmulOperands(int64_t m, int64_t k, int64_t n, uint64_t seed,
                                       bool functional);

HostMatrix ToHost(const dsl::Array& a);
// Rounds every element once to `dtype`.
dsl::Array FromHost(const HostMatrix& m, dsl::DType dtype);
HostMatrix Relu(const HostMatrix& m);
// The matrix with every element rounded to `dtype` (what a program array of it holds).
HostMatrix Rounded(const HostMatrix& m, dsl::DType dtype);
double MaxAbs(const HostMatrix& m);

// a @ b as devices that each hold one of `chunks` equal K-chunks compute it: the sum of the
// chunks' partial products, and the largest |partial| (what bounds their roundings).
struct ChunkedProduct {
  HostMatrix sum;
  double partial_max = 0;
};
ChunkedProduct SumOfKChunks(const dsl::Array& a, const dsl::Array& b, int chunks);

// The most one rounding to `dtype` moves a value of magnitude 1, relative: one unit in the
// last place (2^-7 for bf16's 8 significant bits, 2^-23 for f32). A result computed with
// f32 accumulation and rounded once can differ from the exact product rounded once by one
// such ulp (the two roundings may fall on either side of a tie).
double Ulp(dsl::DType dtype);

// Throws ParamError for `param` unless `extent` splits evenly over `parts`, naming the
// program, the parameter, the dimension it sizes (e.g. "M") and the mesh axis.
void CheckDivides(const std::string& program, const std::string& param,
                  const std::string& dimension, int64_t extent, int parts, const std::string& axis);

// Throws Error(kInvalidArgument) naming `program`'s needs and the mesh's axes when `axis`
// is not one of them: a ParamError for "axis" when `axis` is that parameter's value.
int AxisSizeFor(const std::string& program, const dsl::Mesh& mesh, const std::string& axis,
                bool axis_is_param = true);

}  // namespace tpusim::programs
