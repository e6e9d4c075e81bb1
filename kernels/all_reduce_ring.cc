// Ring all-reduce = reduce-scatter, then all-gather (docs/references.md §3: 2x the
// reduce-scatter time). Phase 1 is the chunked unidirectional ring of
// kernels/reduce_scatter.h, which leaves the sum of block i in device i's own slot of the
// output; phase 2 passes those reduced blocks round the same ring, as all_gather_ring does,
// straight from HBM to HBM.

#include <algorithm>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn RingAllReduce(std::string axis, RingReducePlan plan) {
  return [axis, plan](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];
    const Ref& out = refs[1];
    const Ref& copy_sem = refs[2];
    const Ref& gather_send = refs[3 + kRingReduceScratchCount];
    const Ref& gather_recv = refs[4 + kRingReduceScratchCount];
    const int n = k.axis_size(axis);
    const int me = k.axis_index(axis);
    const int right = (me + 1) % n;
    const int64_t block = plan.block;
    auto slot = [&](int device) { return out.at(ds(device * block, block)); };
    if (n == 1) {
      AsyncCopy own = k.async_copy(x, out, copy_sem);
      own.start();
      own.wait();
      return;
    }

    MeetRingNeighbours(k, axis);

    {
      auto scope = k.named_scope("reduce-scatter");
      RingReducer ring(k, axis, +1, plan, x, slot(me), refs, 3);
      ring.Begin();
      while (!ring.Done())
        ring.Step();
      ring.Finish();  // our reduced block is in out before we pass it on
    }

    // The left neighbour may already be gathering into our other slots: they are disjoint
    // from the one the reduce-scatter wrote, and each step has its own semaphores.
    auto gather = k.named_scope("all-gather");
    for (int step = 0; step < n - 1; ++step) {
      auto scope = k.named_scope("ring step " + std::to_string(step));
      const int forwarded = (me - step + n) % n;  // reduced here, or arrived last step
      AsyncCopy copy = k.async_remote_copy(slot(forwarded), slot(forwarded), gather_send.at(step),
                                           gather_recv.at(step), {{axis, right}});
      copy.start();
      copy.wait_send();
      copy.wait_recv();
    }
  };
}

Workload Make(const Mesh& mesh, const CollectiveArgs& args) {
  const int64_t elements = CheckReductionArgs(mesh, args);
  const int n = mesh.AxisSize(args.axis);
  const int64_t block = elements / n;
  const int64_t steps = std::max(n - 1, 1);
  const RingReducePlan plan = PlanRingReduce(mesh, args, block, 0, block, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  for (auto& spec : RingReduceScratch(plan, args.dtype))
    grid.scratch_shapes.push_back(spec);
  grid.scratch_shapes.push_back(ScratchSpec::DMA({steps}, "gather_send"));
  grid.scratch_shapes.push_back(ScratchSpec::DMA({steps}, "gather_recv"));
  PallasCall call = pallas_call("all_reduce_ring", RingAllReduce(args.axis, plan), grid,
                                {{{elements}, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return ReductionWorkload(mesh, args, /*replicated=*/true, std::move(call));
}

KernelInfo Info() {
  KernelInfo info;
  info.name = "all_reduce_ring";
  info.summary = "ring all-reduce: chunked ring reduce-scatter, then ring all-gather";
  info.make = Make;
  info.bound = RingAllReduceBound;
  info.bus_factor = AllReduceBusFactor;
  return info;
}

const Registration registration(Info());

}  // namespace
}  // namespace tpusim::kernels
