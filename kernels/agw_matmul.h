#pragma once

// The weight-gather matmul schedules of kernels/agw_matmul.cc as pallas_calls, for
// programs that compose them: inputs[M_x, K_y] x weights[K_x, N] -> out[M_x, N]. Per
// device: inputs [M/X, K/Y], weights [K/X, N] in HBM; out [M/X, N], the sum over y already
// done.

#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// The problem: the kernels' parameters axis, axis2, m, k, n, bn and dtype.
struct AgwMatmulProblem {
  std::string x_axis;  // shards the inputs' rows and the weights' K
  std::string y_axis;  // shards the inputs' K; empty: the first other mesh axis
  int64_t m = 0, k = 0, n = 0;
  int64_t column_chunk = 0;  // N's column chunk (bn); 0: chosen from N and Y
  dsl::DType dtype = dsl::DType::kBF16;
};

// fused = false: agw_matmul_ar (gather all weights, multiply, all-reduce, each exposed);
// true: agw_matmul_ar_fused (only the needed weight rows move, in column chunks, while the
// MXU multiplies and the previous chunk is all-reduced). Throws ParamError for a mesh or
// problem that does not shard, naming the parameters to change.
dsl::PallasCall AgwMatmulCall(const dsl::Mesh& mesh, const AgwMatmulProblem& problem, bool fused);

}  // namespace tpusim::kernels
