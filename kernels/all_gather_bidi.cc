// Bidirectional ring all-gather: each shard is split in two; the first half travels right
// round the ring and the second half left, so both directions of every link carry data
// and the transfer takes about half the unidirectional time.

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

struct BidiRefs {
  Ref x, out, local_sem, send_right, recv_from_left, send_left, recv_from_right;
};

KernelFn BidiAllGather(std::string axis, int64_t shard) {
  return [axis, shard](Kernel& k, const Refs&) {
    const auto r = k.operands<BidiRefs>();
    const Ring ring = k.ring(axis);
    const int64_t first_half = shard / 2;
    const int64_t second_half = shard - first_half;
    auto rightward = [&](int device) { return r.out.at(ds(device * shard, first_half)); };
    auto leftward = [&](int device) {
      return r.out.at(ds(device * shard + first_half, second_half));
    };

    {
      auto scope = k.named_scope("own shard");
      AsyncCopy own = k.async_copy(r.x, r.out.at(ds(ring.index * shard, shard)), r.local_sem);
      own.start();
      own.wait();
    }
    if (ring.size == 1) return;

    MeetRingNeighbours(k, axis);

    for (int step = 0; step < ring.size - 1; ++step) {
      auto scope = k.named_scope("bidi step " + std::to_string(step));
      const int from_left = ring.index_at(-step);  // first halves move right
      const int from_right = ring.index_at(step);  // second halves move left
      AsyncCopy to_right = k.async_remote_copy(
          rightward(from_left), rightward(from_left), RingStepSemaphore(r.send_right, step),
          RingStepSemaphore(r.recv_from_left, step), ring.right_device());
      AsyncCopy to_left = k.async_remote_copy(
          leftward(from_right), leftward(from_right), RingStepSemaphore(r.send_left, step),
          RingStepSemaphore(r.recv_from_right, step), ring.left_device());
      to_right.start();
      to_left.start();
      to_right.wait_send();
      to_left.wait_send();
      to_right.wait_recv();
      to_left.wait_recv();
    }
  };
}

const std::vector<std::string> kBidiSemaphores = {"send_right", "recv_from_left", "send_left",
                                                  "recv_from_right"};

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  return AllGatherWorkload(
      mesh, problem,
      AllGatherCall(
          mesh, problem, "all_gather_bidi",
          [&](int64_t shard) { return BidiAllGather(problem.axis, shard); }, 1, kBidiSemaphores));
}

const Registration registration(KernelInfo{
    "all_gather_bidi", "bidirectional ring all-gather, half of each shard each way",
    CollectiveParams(), Make, BidiAllGatherBound, AllGatherBusFactor});

}  // namespace

PallasCall BidiAllGatherCall(const std::string& axis, int axis_size, const ShapeDtype& block) {
  return AllGatherCallOf("all_gather_bidi", axis_size, block, BidiAllGather(axis, block.shape[0]),
                         kBidiSemaphores);
}

}  // namespace tpusim::kernels
