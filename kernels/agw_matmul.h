#pragma once

// The weight-gather matmul schedules of kernels/agw_matmul.cc as pallas_calls, for
// programs that compose them: inputs[M_x, K_y] x weights[K_x, N] -> out[M_x, N], the x and y
// axes and the problem from `args` (axis, axis2, m, k, n, bn, dtype). Per device: inputs
// [M/X, K/Y], weights [K/X, N] in HBM; out [M/X, N], the sum over y already done.

#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// fused = false: agw_matmul_ar (gather all weights, multiply, all-reduce, each exposed);
// true: agw_matmul_ar_fused (only the needed weight rows move, in column chunks, while the
// MXU multiplies and the previous chunk is all-reduced). Throws Error(kInvalidArgument)
// for a mesh or problem that does not shard, naming the flag to change.
dsl::PallasCall AgwMatmulCall(const dsl::Mesh& mesh, const CollectiveArgs& args, bool fused);

}  // namespace tpusim::kernels
