#pragma once

// The problem parameters many entries share, declared once: the mesh axis, the size V of
// a collective, a matmul's m/k/n and block sizes, the dtype and the dots' precision. An
// entry includes the ones it takes in its KernelInfo::params (adapting a default or a
// description where its meaning differs) and reads them back through the views below.

#include <string>
#include <vector>

#include "dsl/dtype.h"
#include "dsl/mesh.h"
#include "kernels/params.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// axis: the mesh axis a collective runs over (default "x").
Param AxisParam();
// axis2: the second mesh axis of two-axis entries (auto: the first other mesh axis).
Param Axis2Param();
// bytes: V, the size of the full (gathered) array (required).
Param BytesParam();
// dtype: the element type, one of `allowed` (default bf16). `why` (optional) says why a
// type is missing, e.g. int8 sums overflow.
Param DTypeParam(const std::vector<dsl::DType>& allowed = {dsl::DType::kBF16, dsl::DType::kF32,
                                                           dsl::DType::kInt8, dsl::DType::kInt32},
                 const std::string& why = "");
// precision: jax.lax.Precision of the dots (default DEFAULT).
Param PrecisionParam();
// direction: which neighbour a one-way ring sends to, "right" (default) or "left".
Param RingDirectionParam();
// m, k, n: a matmul's [m, k] x [k, n] (required; programs give defaults).
Param MParam();
Param KParam();
Param NParam();
// bm, bk, bn: block sizes (auto: the entry's default blocking).
Param BmParam();
Param BkParam();
Param BnParam();

// axis, bytes, dtype: what a collective over one axis takes.
std::vector<Param> CollectiveParams(const std::vector<dsl::DType>& dtypes = {dsl::DType::kBF16,
                                                                             dsl::DType::kF32,
                                                                             dsl::DType::kInt8,
                                                                             dsl::DType::kInt32},
                                    const std::string& why = "");
// m, k, n, dtype (bf16 or f32 unless `dtypes` says otherwise): a matmul problem.
std::vector<Param> MatmulParams(const std::vector<dsl::DType>& dtypes = {dsl::DType::kBF16,
                                                                         dsl::DType::kF32});

// What the collectives read: axis, bytes, dtype, and how to build the workload.
struct CollectiveProblem {
  std::string axis;
  uint64_t bytes = 0;
  dsl::DType dtype = dsl::DType::kBF16;
  bool functional = true;  // false: placeholder inputs, no reference
  uint64_t seed = 1;
};
CollectiveProblem CollectiveProblemOf(const Params& params);

// What the matmuls read: m, k, n, dtype, and how to build the workload.
struct MatmulProblem {
  int64_t m = 0, k = 0, n = 0;
  dsl::DType dtype = dsl::DType::kBF16;
  bool functional = true;
  uint64_t seed = 1;
};
MatmulProblem MatmulProblemOf(const Params& params);

dsl::DType DTypeOf(const Params& params);  // the "dtype" parameter

// The axis exists and V splits into whole elements per shard (axis size x `divisor`
// shards). Throws ParamError for "bytes" with the nearest valid sizes. Returns the axis
// size.
int CheckCollectiveProblem(const dsl::Mesh& mesh, const CollectiveProblem& problem,
                           int divisor = 1);

// Global input `index` of an entry run with `seed`: the one generator every entry draws
// its inputs from (docs/dsl.md, "Inputs"), so two entries whose inputs have the same shapes
// and dtypes get the same values, and `compare` can check one against the other. Floats
// are uniform in [-1, 1) rounded to the dtype (Array::Random), integers come from
// RandomIntegerArray; a placeholder when not functional.
dsl::Array EntryInput(const dsl::Shape& shape, dsl::DType dtype, uint64_t seed, int index,
                      bool functional);

// Input 0: a 1-D global array of problem.bytes bytes.
dsl::Array MakeCollectiveInput(const CollectiveProblem& problem);

// A random [m, k] x [k, n] matmul problem for `w`: the two global inputs (inputs 0 and 1
// of EntryInput), their product computed on the
// host in f64 and rounded once as the expected output, and the tolerance of an MXU result
// at DEFAULT precision (one bf16 pass, f32 accumulation in another order, then one
// rounding to the dtype).
// Integer dtypes get integers from RandomIntegerArray and the exact product, compared
// exactly.
void AddMatmulOperands(Workload& w, const MatmulProblem& problem);

// Integers spread over [-range, range] (127 for int8, 2^20 for int32), so int32 products
// overflow and wrap as on the chip.
dsl::Array RandomIntegerArray(const dsl::Shape& shape, dsl::DType dtype, uint64_t seed);
// The exact int32 product of two integer matrices, wrapping modulo 2^32.
dsl::Array ExactIntegerProduct(const dsl::Array& a, const dsl::Array& b);

}  // namespace tpusim::kernels
