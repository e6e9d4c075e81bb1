// Unidirectional ring reduce-scatter: X-1 steps; at each step every device adds its own
// copy of the block arriving from the left (on the VPU, in VMEM) and passes the partial
// sum to the right (or, with direction=left, the other way), so partial sums travel and
// inputs stay put. Chunked and
// double-buffered with credit semaphores so the link never waits for the adds (see
// kernels/reduce_scatter.h).

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn RingReduceScatter(std::string axis, RingReducePlan plan, int direction) {
  return [axis, plan, direction](Kernel& k, const Refs& refs) {
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

    // Nobody may DMA into (or signal) a device that has not entered the kernel yet.
    MeetRingNeighbours(k, axis);

    RingReducer ring(k, k.ring(axis), direction, plan, x, out, refs, 3);
    ring.Begin();
    while (!ring.Done())
      ring.Step();
    ring.Finish();
  };
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const int64_t elements = CheckReductionProblem(mesh, problem);
  const int64_t block = elements / mesh.AxisSize(problem.axis);
  const RingReducePlan plan =
      PlanRingReduce(mesh, problem.dtype, RingChunkingOf(params), block, 0, block, 1);
  const int direction = params.String("direction") == "left" ? -1 : +1;
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  for (auto& spec : RingReduceScratch(plan, problem.dtype))
    grid.scratch_shapes.push_back(spec);
  PallasCall call =
      pallas_call("reduce_scatter_ring", RingReduceScatter(problem.axis, plan, direction), grid,
                  {{{block}, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return ReductionWorkload(mesh, problem, /*replicated=*/false, std::move(call));
}

const Registration registration(KernelInfo{
    "reduce_scatter_ring",
    "unidirectional ring reduce-scatter: partial sums travel, VPU adds in VMEM",
    ParamList(ReductionParams(), RingChunkingParams(), RingDirectionParam()), Make,
    RingReduceScatterBound, ReduceScatterBusFactor});

}  // namespace
}  // namespace tpusim::kernels
