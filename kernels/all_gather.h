#pragma once

// What the all-gather kernels share: the workload around a kernel, and the bounds of
// docs/references.md §3.

#include "dsl/pallas_call.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// Input P(axis), output replicated: every device ends with the whole array.
Workload AllGatherWorkload(const dsl::Mesh& mesh, const CollectiveArgs& args, dsl::PallasCall call);

// One direction, or no wraparound: T = (V/W_oneway)(X-1)/X; latency-bound at T_min.
Bound RingAllGatherBound(const dsl::Mesh& mesh, const CollectiveArgs& args);
// With wraparound: T = max(T_min X/2, (V/W_ici)(X-1)/X); without it, the one-direction
// figure.
Bound BidiAllGatherBound(const dsl::Mesh& mesh, const CollectiveArgs& args);

// nccl-tests: busbw = algbw x (X-1)/X for all-gather.
double AllGatherBusFactor(int axis_size);

}  // namespace tpusim::kernels
