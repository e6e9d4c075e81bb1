// Ring all-reduce = reduce-scatter, then all-gather (docs/references.md §3: 2x the
// reduce-scatter time). Phase 1 is the chunked unidirectional ring of
// kernels/reduce_scatter.h, which leaves the sum of block i in device i's own slot of the
// output; phase 2 passes those reduced blocks round the same ring, as all_gather_ring does,
// straight from HBM to HBM.

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/lax/views.h"
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
    const Ring ring = k.ring(axis);
    const int n = ring.size;
    const int me = ring.index;
    const DeviceId right = ring.right_device();
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
      RingReducer reducer(k, k.ring(axis), +1, plan, x, slot(me), refs, 3);
      reducer.Begin();
      while (!reducer.Done())
        reducer.Step();
      reducer.Finish();  // our reduced block is in out before we pass it on
    }

    // The left neighbour may already be gathering into our other slots: they are disjoint
    // from the one the reduce-scatter wrote, and alternate steps alternate semaphores.
    auto gather = k.named_scope("all-gather");
    for (int step = 0; step < n - 1; ++step) {
      auto scope = k.named_scope("ring step " + std::to_string(step));
      const int forwarded = ring.index_at(-step);  // reduced here, or arrived last step
      AsyncCopy copy = k.async_remote_copy(slot(forwarded), slot(forwarded),
                                           RingStepSemaphore(gather_send, step),
                                           RingStepSemaphore(gather_recv, step), right);
      copy.start();
      copy.wait_send();
      copy.wait_recv();
    }
  };
}

// all_reduce_ring of an operand of type `x` (RingAllReduceCall), chunked as `chunking` says.
PallasCall AllReduceCall(const Mesh& mesh, const std::string& axis, const ShapeDtype& x,
                         const RingChunking& chunking) {
  CollectiveProblem problem;
  problem.axis = axis;
  problem.dtype = x.dtype;
  int64_t elements = 1;
  for (int64_t d : x.shape)
    elements *= d;
  problem.bytes = static_cast<uint64_t>(elements) * SizeOf(x.dtype);
  CheckReductionProblem(mesh, problem);
  const int n = mesh.AxisSize(axis);
  const int64_t block = elements / n;
  const RingReducePlan plan = PlanRingReduce(mesh, x.dtype, chunking, block, 0, block, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  for (auto& spec : RingReduceScratch(plan, x.dtype))
    grid.scratch_shapes.push_back(spec);
  grid.scratch_shapes.push_back(ScratchSpec::DMA({kStepSemaphores}, "gather_send"));
  grid.scratch_shapes.push_back(ScratchSpec::DMA({kStepSemaphores}, "gather_recv"));
  // The ring works on the flat, row-major elements of an operand of any rank.
  KernelFn ring = RingAllReduce(axis, plan);
  KernelFn flat = [ring, elements](Kernel& k, const Refs& refs) {
    Refs viewed = refs;
    viewed[0] = lax::Reshape(refs[0], {elements});
    viewed[1] = lax::Reshape(refs[1], {elements});
    ring(k, viewed);
  };
  PallasCall call = pallas_call("all_reduce_ring", flat, grid, {x});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return call;
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const int64_t elements = CheckReductionProblem(mesh, problem);
  return ReductionWorkload(
      mesh, problem, /*replicated=*/true,
      AllReduceCall(mesh, problem.axis, {{elements}, problem.dtype}, RingChunkingOf(params)));
}

const Registration registration(KernelInfo{
    "all_reduce_ring", "ring all-reduce: chunked ring reduce-scatter, then ring all-gather",
    ParamList(ReductionParams(), RingChunkingParams()), Make, RingAllReduceBound,
    AllReduceBusFactor});

}  // namespace

PallasCall RingAllReduceCall(const Mesh& mesh, const std::string& axis, const ShapeDtype& x) {
  return AllReduceCall(mesh, axis, x, RingChunking{});
}

}  // namespace tpusim::kernels
