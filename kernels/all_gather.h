#pragma once

// What the all-gather kernels share: the workload around a kernel, and the bounds of
// docs/references.md §3.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dsl/pallas_call.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {

// Input P(axis), output replicated: every device ends with the whole array.
Workload AllGatherWorkload(const dsl::Mesh& mesh, const CollectiveProblem& problem,
                           dsl::PallasCall call);

// The pallas_call `name` of an all-gather over `axis_size` devices whose blocks (`block`,
// any rank) are gathered along dimension 0 in HBM: input "x" (this device's block), output
// "out" (the gathered array), the DMA semaphore "local_sem", then one array of
// kStepSemaphores DMA semaphores per name in `step_semaphores`, which ring steps take turns
// on (RingStepSemaphore, kernels/ring.h).
struct RingAllGatherRefs {  // its operands, for Kernel::operands<RingAllGatherRefs>()
  dsl::Ref x, out, local_sem, send_sems, recv_sems;
};
dsl::PallasCall AllGatherCallOf(const std::string& name, int axis_size,
                                const dsl::ShapeDtype& block, dsl::KernelFn kernel,
                                const std::vector<std::string>& step_semaphores = {"send_sems",
                                                                                   "recv_sems"});
// The same for a 1-D all-gather of problem.bytes over problem.axis: `kernel` makes the body
// for a shard of that many elements; `divisor` is what each shard must split into
// (CheckCollectiveProblem).
dsl::PallasCall AllGatherCall(
    const dsl::Mesh& mesh, const CollectiveProblem& problem, const std::string& name,
    const std::function<dsl::KernelFn(int64_t shard)>& kernel, int divisor = 1,
    const std::vector<std::string>& step_semaphores = {"send_sems", "recv_sems"});

// The built-in ring (one direction) and bidirectional all-gathers of `block` over `axis`
// of `axis_size` devices (tiled, as lax.all_gather(x, axis, axis=0, tiled=True)).
dsl::PallasCall RingAllGatherCall(const std::string& axis, int axis_size,
                                  const dsl::ShapeDtype& block);
dsl::PallasCall BidiAllGatherCall(const std::string& axis, int axis_size,
                                  const dsl::ShapeDtype& block);

// One direction, or no wraparound: T = (V/W_oneway)(X-1)/X; latency-bound at T_min.
Bound RingAllGatherBoundFor(const dsl::Mesh& mesh, const std::string& axis, uint64_t bytes);
// With wraparound: T = max(T_min X/2, (V/W_ici)(X-1)/X); without it, the one-direction
// figure.
Bound BidiAllGatherBoundFor(const dsl::Mesh& mesh, const std::string& axis, uint64_t bytes);
// The same for an entry's axis and bytes parameters (a KernelInfo::bound).
Bound RingAllGatherBound(const dsl::Mesh& mesh, const Params& params);
Bound BidiAllGatherBound(const dsl::Mesh& mesh, const Params& params);

// nccl-tests: busbw = algbw x (X-1)/X for all-gather.
double AllGatherBusFactor(int axis_size);

}  // namespace tpusim::kernels
