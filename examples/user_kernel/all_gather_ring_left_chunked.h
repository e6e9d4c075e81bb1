#pragma once

// The user's kernel, for the user's program (gather_sum_program.cc) to call.

#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/params.h"
#include "kernels/problem_params.h"

namespace user_kernel {

// The kernel's own parameter, declared once for the kernel and the program that calls it:
// `chunks`, the DMAs each ring step's shard is cut into (default 2). The CLI makes it the
// flag --chunks.
tpusim::kernels::Param ChunksParam();

// The pallas_call of all_gather_ring_left_chunked: gathers problem.bytes over problem.axis,
// each step's shard sent as `chunks` DMAs.
tpusim::dsl::PallasCall LeftRingChunkedAllGatherCall(
    const tpusim::dsl::Mesh& mesh, const tpusim::kernels::CollectiveProblem& problem,
    int64_t chunks);

}  // namespace user_kernel
