#pragma once

// What the all-gather kernels share: the workload around a kernel, and the bounds of
// docs/references.md §3.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dsl/pallas_call.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// Input P(axis), output replicated: every device ends with the whole array.
Workload AllGatherWorkload(const dsl::Mesh& mesh, const CollectiveArgs& args, dsl::PallasCall call);

// The pallas_call of a ring all-gather of args.bytes over args.axis, named `name`: input
// "x" (this device's shard), output "out" (the whole array), the DMA semaphore
// "local_sem", then one array of DMA semaphores per name in `step_semaphores`, with one per
// ring step. `kernel` makes the body for a shard of that many elements; `divisor` is what
// each shard must split into (CheckCollectiveArgs).
struct RingAllGatherRefs {  // its operands, for Kernel::operands<RingAllGatherRefs>()
  dsl::Ref x, out, local_sem, send_sems, recv_sems;
};
dsl::PallasCall RingAllGatherCall(
    const dsl::Mesh& mesh, const CollectiveArgs& args, const std::string& name,
    const std::function<dsl::KernelFn(int64_t shard)>& kernel, int divisor = 1,
    const std::vector<std::string>& step_semaphores = {"send_sems", "recv_sems"});

// One direction, or no wraparound: T = (V/W_oneway)(X-1)/X; latency-bound at T_min.
Bound RingAllGatherBound(const dsl::Mesh& mesh, const CollectiveArgs& args);
// With wraparound: T = max(T_min X/2, (V/W_ici)(X-1)/X); without it, the one-direction
// figure.
Bound BidiAllGatherBound(const dsl::Mesh& mesh, const CollectiveArgs& args);

// nccl-tests: busbw = algbw x (X-1)/X for all-gather.
double AllGatherBusFactor(int axis_size);

}  // namespace tpusim::kernels
