// Unidirectional ring all-gather: N-1 steps; at step s every device forwards the shard it
// received at step s-1 (its own at s=0) to its right neighbour. One receive semaphore per
// step keeps a fast neighbour's next shard from being mistaken for this step's.

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn RingAllGather(std::string axis, int64_t shard) {
  return [axis, shard](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];
    const Ref& out = refs[1];
    const Ref& local_sem = refs[2];
    const Ref& send_sems = refs[3];
    const Ref& recv_sems = refs[4];
    const int n = k.axis_size(axis);
    const int me = k.axis_index(axis);
    const int right = (me + 1) % n;
    auto slot = [&](int device) { return out.at(ds(device * shard, shard)); };

    {
      auto scope = k.named_scope("own shard");
      AsyncCopy own = k.async_copy(x, slot(me), local_sem);
      own.start();
      own.wait();
    }
    if (n == 1) return;

    // Nobody may DMA into a device that has not entered the kernel yet.
    MeetRingNeighbours(k, axis);

    for (int step = 0; step < n - 1; ++step) {
      auto scope = k.named_scope("ring step " + std::to_string(step));
      const int forwarded = (me - step + n) % n;  // arrived from the left last step
      AsyncCopy copy = k.async_remote_copy(slot(forwarded), slot(forwarded), send_sems.at(step),
                                           recv_sems.at(step), {{axis, right}});
      copy.start();
      copy.wait_send();
      // The left neighbour's copy of the same size lands on our recv_sems[step].
      copy.wait_recv();
    }
  };
}

Workload Make(const Mesh& mesh, const CollectiveArgs& args) {
  const int n = CheckCollectiveArgs(mesh, args);
  const int64_t elements = static_cast<int64_t>(args.bytes / SizeOf(args.dtype));
  const int64_t shard = elements / n;
  const int64_t steps = std::max(n - 1, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"), ScratchSpec::DMA({steps}, "send_sems"),
                         ScratchSpec::DMA({steps}, "recv_sems")};
  PallasCall call = pallas_call("all_gather_ring", RingAllGather(args.axis, shard), grid,
                                {{{elements}, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return AllGatherWorkload(mesh, args, std::move(call));
}

const Registration registration(KernelInfo{
    "all_gather_ring", "unidirectional ring all-gather, N-1 steps, start barrier", Make,
    RingAllGatherBound, AllGatherBusFactor});

}  // namespace
}  // namespace tpusim::kernels
