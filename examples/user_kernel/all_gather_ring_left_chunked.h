#pragma once

// The user's kernel, for the user's program (gather_sum_program.cc) to call.

#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/registry.h"

namespace user_kernel {

// The pallas_call of all_gather_ring_left_chunked: gathers args.bytes over args.axis.
tpusim::dsl::PallasCall LeftRingChunkedAllGatherCall(const tpusim::dsl::Mesh& mesh,
                                                     const tpusim::kernels::CollectiveArgs& args);

}  // namespace user_kernel
