// Unidirectional ring all-gather: N-1 steps; at step s every device forwards the shard it
// received at step s-1 (its own at s=0) to its right neighbour (or, with direction=left,
// its left one). Alternate steps use alternate receive semaphores (RingStepSemaphore), so a
// fast neighbour's next shard is never mistaken for this step's.

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

// direction: +1 sends to the right neighbour, -1 to the left one.
KernelFn RingAllGather(std::string axis, int64_t shard, int direction) {
  return [axis, shard, direction](Kernel& k, const Refs&) {
    const auto r = k.operands<RingAllGatherRefs>();
    const Ring ring = k.ring(axis);
    auto slot = [&](int index) { return r.out.at(ds(index * shard, shard)); };

    {
      auto scope = k.named_scope("own shard");
      AsyncCopy own = k.async_copy(r.x, slot(ring.index), r.local_sem);
      own.start();
      own.wait();
    }
    if (ring.size == 1) return;

    // Nobody may DMA into a device that has not entered the kernel yet.
    MeetRingNeighbours(k, axis);

    const RingStepSemaphores send_sems(r.send_sems), recv_sems(r.recv_sems);
    for (int step = 0; step < ring.size - 1; ++step) {
      auto scope = k.named_scope("ring step " + std::to_string(step));
      // Arrived from the neighbour on the other side last step; it goes to the same slot
      // of the neighbour's output.
      const Ref shard = slot(ring.index_at(-direction * step));
      AsyncCopy copy =
          k.async_remote_copy(shard, shard, send_sems[step], recv_sems[step],
                              direction > 0 ? ring.right_device() : ring.left_device());
      copy.start();
      copy.wait_send();
      // The other neighbour's copy of the same size lands on our recv_sems[step % 2].
      copy.wait_recv();
    }
  };
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const int direction = params.String("direction") == "left" ? -1 : +1;
  return AllGatherWorkload(mesh, problem,
                           AllGatherCall(mesh, problem, "all_gather_ring", [&](int64_t shard) {
                             return RingAllGather(problem.axis, shard, direction);
                           }));
}

const Registration registration(KernelInfo{
    "all_gather_ring", "unidirectional ring all-gather, N-1 steps, start barrier",
    ParamList(CollectiveParams(), RingDirectionParam()), Make, RingAllGatherBound,
    AllGatherBusFactor});

}  // namespace

PallasCall RingAllGatherCall(const std::string& axis, int axis_size, const ShapeDtype& block) {
  return AllGatherCallOf("all_gather_ring", axis_size, block,
                         RingAllGather(axis, block.shape[0], +1));
}

}  // namespace tpusim::kernels
