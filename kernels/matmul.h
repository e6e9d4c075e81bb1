#pragma once

// The tiled matmul: out[m, n] = a[m, k] @ b[k, n] on every chip independently, blocked as
// (bm, bk, bn) over the grid (m/bm, n/bn, k/bk) with k last, a VMEM accumulator (f32, or
// int32 for int8/int32 operands) zeroed at k == 0 and flushed to the output block at the
// last k. Its dots take the given precision. Its bound is the roofline of docs/references.md §1
// with the dtype's MXU passes (base/work.h).

#include <string>

#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

struct MatmulPlan {
  int64_t m = 0, k = 0, n = 0;
  int64_t bm = 0, bk = 0, bn = 0;        // block sizes, defaults applied
  dsl::DType dtype = dsl::DType::kBF16;  // of a and b
  dsl::Precision precision = dsl::Precision::kDefault;
  std::vector<int> grid;  // (m/bm, n/bn, k/bk)

  bool integer() const { return dtype == dsl::DType::kInt8 || dtype == dsl::DType::kInt32; }
  // Integer products come out exact in int32; float ones in the operands' dtype.
  dsl::DType out_dtype() const { return integer() ? dsl::DType::kInt32 : dtype; }
  // The VMEM accumulator: the MXU accumulates floats in f32 and integers in int32.
  dsl::DType acc_dtype() const { return integer() ? dsl::DType::kInt32 : dsl::DType::kF32; }
};

// `request` (m, k, n, dtype, precision, and the blocks wanted; 0: the default) with the
// default blocks applied (512, 1024, 1024, shrunk to divisors that keep the (8, 128) rule)
// and the grid; throws ParamError naming a block larger than its dimension. Blocks that
// break the tiling rules are reported by the BlockSpec checks when the program runs.
MatmulPlan PlanMatmul(MatmulPlan request);

// A block along a dimension of `extent`: `extent` when it fits in `want`; else the largest
// multiple of `quantum` up to `want` that divides `extent`; else `extent`.
int64_t DefaultBlock(int64_t want, int64_t extent, int64_t quantum);

// The pallas_call of one chip's matmul.
dsl::PallasCall MatmulCall(const MatmulPlan& plan);

// max(FLOPs / peak, HBM bytes / HBM bandwidth), with the HBM bytes of the actual
// blocking: a block is fetched only when the grid moves to a different one, so A is read
// about n/bn times, B about m/bm times, and the output written once.
Bound MatmulRoofline(const dsl::Mesh& mesh, const MatmulPlan& plan);

// Seconds of one core's MXUs at their peak for `flops` of `dtype` operands at DEFAULT
// precision: the passes a dtype takes (int32 several, int8 a fraction of one) included, so
// a bound is never below what the chip can do.
double MxuPeakSeconds(const dsl::Mesh& mesh, double flops, dsl::DType dtype);

// How a [B, K] x [K, N] matmul splits for a ring along `axis` (Y devices): its rows over
// the other mesh axes (X devices), K and N over the ring.
struct RingMatmulShards {
  std::string ring;                 // the ring axis (Y)
  std::vector<std::string> others;  // the axes the rows split over (X)
  int y = 1;
  int64_t rows = 0;     // B / X
  int64_t k_chunk = 0;  // K / Y
  int64_t n_chunk = 0;  // N / Y
};
// What an error calls the operands and dimensions, e.g. {"the all-gather matmul", "A", "W",
// "D", "F"} for A[B, D] x W[D, F].
struct RingMatmulNames {
  const char* kernel;
  const char* lhs;
  const char* rhs;
  const char* k;
  const char* n;
};
// The parameters of such a kernel: axis (the ring), m = B, k and n named as `names` says,
// dtype one of `dtypes`.
std::vector<Param> RingMatmulParams(const RingMatmulNames& names,
                                    const std::vector<dsl::DType>& dtypes = {dsl::DType::kBF16,
                                                                             dsl::DType::kF32});
// Throws ParamError naming m, k and n when a dimension does not split.
RingMatmulShards ShardRingMatmul(const dsl::Mesh& mesh, const std::string& axis,
                                 const MatmulProblem& problem, const RingMatmulNames& names);

}  // namespace tpusim::kernels
