#pragma once

// What the all-gather kernels share: the workload around a kernel, and the bounds of
// docs/references.md §3.

#include <string>

#include "dsl/pallas_call.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// The pallas_calls of the ring (one direction) and bidirectional all-gathers over `axis` of
// `axis_size` devices: each device's `block` (any rank) is gathered along dimension 0, in
// HBM (tiled, as lax.all_gather(x, axis, axis=0, tiled=True)).
dsl::PallasCall RingAllGatherCall(const std::string& axis, int axis_size,
                                  const dsl::ShapeDtype& block);
dsl::PallasCall BidiAllGatherCall(const std::string& axis, int axis_size,
                                  const dsl::ShapeDtype& block);

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
