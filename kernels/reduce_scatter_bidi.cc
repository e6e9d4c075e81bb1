// Bidirectional ring reduce-scatter: the first half of every block is reduced round the
// ring to the right and the second half to the left, so both directions of every link
// carry partial sums and the reduction takes about half the unidirectional time. The two
// directions are two independent chunked rings (kernels/reduce_scatter.h), interleaved
// chunk by chunk on one core.

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn BidiReduceScatter(std::string axis, RingReducePlan right_plan, RingReducePlan left_plan) {
  return [axis, right_plan, left_plan](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];
    const Ref& out = refs[1];
    const Ref& copy_sem = refs[2];
    const int n = k.axis_size(axis);
    if (n == 1) {
      AsyncCopy own = k.async_copy(x, out, copy_sem);
      own.start();
      own.wait();
      return;
    }

    MeetRingNeighbours(k, axis);

    ReduceBothWays(k, k.ring(axis), right_plan, left_plan, x, out, refs, 3);
  };
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const RingChunking chunking = RingChunkingOf(params);
  const int64_t elements = CheckReductionProblem(mesh, problem);
  const int64_t block = elements / mesh.AxisSize(problem.axis);
  const int64_t first_half = block / 2;
  const RingReducePlan right =
      PlanRingReduce(mesh, problem.dtype, chunking, block, 0, first_half, 2);
  const RingReducePlan left =
      PlanRingReduce(mesh, problem.dtype, chunking, block, first_half, block - first_half, 2);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  for (auto& spec : RingReduceScratch(right, problem.dtype, "right_"))
    grid.scratch_shapes.push_back(spec);
  for (auto& spec : RingReduceScratch(left, problem.dtype, "left_"))
    grid.scratch_shapes.push_back(spec);
  PallasCall call = pallas_call("reduce_scatter_bidi", BidiReduceScatter(problem.axis, right, left),
                                grid, {{{block}, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return ReductionWorkload(mesh, problem, /*replicated=*/false, std::move(call));
}

const Registration registration(KernelInfo{
    "reduce_scatter_bidi", "bidirectional ring reduce-scatter, half of each block each way",
    ParamList(ReductionParams(), RingChunkingParams()), Make, BidiReduceScatterBound,
    ReduceScatterBusFactor});

}  // namespace
}  // namespace tpusim::kernels
