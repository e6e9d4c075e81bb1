// Unidirectional ring reduce-scatter: X-1 steps; at each step every device adds its own
// copy of the block arriving from the left (on the VPU, in VMEM) and passes the partial
// sum to the right, so partial sums travel and inputs stay put. Chunked and
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

KernelFn RingReduceScatter(std::string axis, RingReducePlan plan) {
  return [axis, plan](Kernel& k, const Refs& refs) {
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

    RingReducer ring(k, axis, +1, plan, x, out, refs, 3);
    ring.Begin();
    while (!ring.Done())
      ring.Step();
    ring.Finish();
  };
}

Workload Make(const Mesh& mesh, const CollectiveArgs& args) {
  const int64_t elements = CheckReductionArgs(mesh, args);
  const int64_t block = elements / mesh.AxisSize(args.axis);
  const RingReducePlan plan = PlanRingReduce(mesh, args, block, 0, block, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  for (auto& spec : RingReduceScratch(plan, args.dtype))
    grid.scratch_shapes.push_back(spec);
  PallasCall call = pallas_call("reduce_scatter_ring", RingReduceScatter(args.axis, plan), grid,
                                {{{block}, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return ReductionWorkload(mesh, args, /*replicated=*/false, std::move(call));
}

const Registration registration(KernelInfo{
    "reduce_scatter_ring",
    "unidirectional ring reduce-scatter: partial sums travel, VPU adds in VMEM", Make,
    RingReduceScatterBound, ReduceScatterBusFactor});

}  // namespace
}  // namespace tpusim::kernels
