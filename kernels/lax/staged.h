#pragma once

// The latency-optimal reductions of the lax collectives, as pieces of a kernel body: data
// lands in VMEM staging slots and is combined on the VPU there, then stored to HBM. On X
// devices (docs/references.md §3):
//
// - direct: one step: every device sends what ring member j needs (its whole operand for
//   an all-reduce, block j for a reduce-scatter) straight to j's staging slot for it; each
//   device combines the X slots in ring order (the same order everywhere, so every copy of
//   an all-reduce agrees bit for bit). T ~ the farthest route's hops x T_hop + its busiest
//   link's bytes / W, plus X-1 VPU passes.
// - recursive_doubling (all-reduce, X a power of two): log2 X steps; at step k each device
//   swaps its running result with the device whose ring index differs in bit k and combines
//   the two (a + b = b + a exactly, so both partners agree).
//
// An operand larger than the staging slots goes in rounds of one slot each; from the second
// round on, a device tells its senders when its slots are free again (REGULAR "ready"
// semaphore) and waits for its receivers' word before sending, so no slot is overwritten
// while it is still being combined (docs/references.md §5's capacity hazard).

#include <functional>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/lax/algorithm.h"
#include "kernels/reduce_scatter.h"

namespace tpusim::kernels::lax {

// A [rows, cols] (or [cols]) view of an HBM operand: what this device sends to ring member
// `index`.
using Payload = std::function<dsl::Ref(int index)>;

// How a staged reduction of a [rows, cols] payload is cut into rounds: boxes of up to
// rows_per_round x cols_per_round, sized so that its staging slots take at most `vmem_share`
// of VMEM (and 4 MiB each). A payload of rank 1 is [cols] (rows 1).
struct StagedPlan {
  Algorithm algorithm = Algorithm::kDirect;
  int ring_size = 1;
  int64_t rows = 1, cols = 1;
  int64_t rows_per_round = 1, cols_per_round = 1;
  int slots() const;  // direct: X, one per sender; recursive_doubling: log2 X, one per step
};
StagedPlan PlanStaged(const dsl::Mesh& mesh, dsl::DType dtype, Algorithm algorithm, int ring_size,
                      int64_t rows, int64_t cols, double vmem_share = 0.25);

// Its scratch, named from `prefix`: stage (VMEM [slots, R, C]), acc (VMEM [R, C]), send and
// recv (DMA [slots]), local (DMA), ready (REGULAR).
std::vector<dsl::ScratchSpec> StagedScratch(const StagedPlan& plan, dsl::DType dtype,
                                            const std::string& prefix);

// Reduces: out = the combination over the ring of what every member sends this device
// (payload(me) as seen on each of them). `out` is [rows, cols]. The caller has met the peers
// (kernels/lax/gather.h PeersOf with the plan's algorithm). recursive_doubling sends every
// member the same payload (an all-reduce). `out` and the payloads have the same rank.
void StagedReduce(dsl::Kernel& k, const dsl::Ring& ring, const StagedPlan& plan,
                  Reduction reduction, const Payload& payload, const dsl::Ref& out,
                  const std::string& prefix);

}  // namespace tpusim::kernels::lax
