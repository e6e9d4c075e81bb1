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

KernelFn BidiAllGather(std::string axis, int64_t shard) {
  return [axis, shard](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];
    const Ref& out = refs[1];
    const Ref& local_sem = refs[2];
    const Ref& send_right = refs[3];
    const Ref& recv_from_left = refs[4];
    const Ref& send_left = refs[5];
    const Ref& recv_from_right = refs[6];
    const int n = k.axis_size(axis);
    const int me = k.axis_index(axis);
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    const int64_t first_half = shard / 2;
    const int64_t second_half = shard - first_half;
    auto rightward = [&](int device) { return out.at(ds(device * shard, first_half)); };
    auto leftward = [&](int device) {
      return out.at(ds(device * shard + first_half, second_half));
    };

    {
      auto scope = k.named_scope("own shard");
      AsyncCopy own = k.async_copy(x, out.at(ds(me * shard, shard)), local_sem);
      own.start();
      own.wait();
    }
    if (n == 1) return;

    MeetRingNeighbours(k, axis);

    for (int step = 0; step < n - 1; ++step) {
      auto scope = k.named_scope("bidi step " + std::to_string(step));
      const int from_left = (me - step + n) % n;  // first halves move right
      const int from_right = (me + step) % n;     // second halves move left
      AsyncCopy to_right =
          k.async_remote_copy(rightward(from_left), rightward(from_left), send_right.at(step),
                              recv_from_left.at(step), {{axis, right}});
      AsyncCopy to_left =
          k.async_remote_copy(leftward(from_right), leftward(from_right), send_left.at(step),
                              recv_from_right.at(step), {{axis, left}});
      to_right.start();
      to_left.start();
      to_right.wait_send();
      to_left.wait_send();
      to_right.wait_recv();
      to_left.wait_recv();
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
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"), ScratchSpec::DMA({steps}, "send_right"),
                         ScratchSpec::DMA({steps}, "recv_from_left"),
                         ScratchSpec::DMA({steps}, "send_left"),
                         ScratchSpec::DMA({steps}, "recv_from_right")};
  PallasCall call = pallas_call("all_gather_bidi", BidiAllGather(args.axis, shard), grid,
                                {{{elements}, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return AllGatherWorkload(mesh, args, std::move(call));
}

const Registration registration(KernelInfo{
    "all_gather_bidi", "bidirectional ring all-gather, half of each shard each way", Make,
    BidiAllGatherBound, AllGatherBusFactor});

}  // namespace
}  // namespace tpusim::kernels
