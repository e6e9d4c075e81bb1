#include "examples/first_kernel/ring_all_gather.h"

#include <utility>

#include "dsl/kernel.h"

namespace tpusim::examples {

using namespace dsl;

KernelFn RingAllGather(std::string axis, int64_t shard) {
  return [axis, shard](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];          // input shard, memory space ANY (HBM)
    const Ref& out = refs[1];        // output, ANY: we move data with DMAs ourselves
    const Ref& local_sem = refs[2];  // ScratchSpec::DMA(): one DMA semaphore
    const Ref& send_sems = refs[3];  // ScratchSpec::DMA({2}): steps alternate
    const Ref& recv_sems = refs[4];

    const int n = k.axis_size(axis);
    const int me = k.axis_index(axis);
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    auto slot = [&](int device) { return out.at(ds(device * shard, shard)); };

    AsyncCopy own = k.async_copy(x, slot(me), local_sem);
    own.start();
    own.wait();
    if (n == 1) return;

    const Ref barrier = k.barrier_semaphore();
    k.signal(barrier, 1, {{axis, left}});
    k.signal(barrier, 1, {{axis, right}});
    k.wait(barrier, 2);

    for (int step = 0; step < n - 1; ++step) {
      const int forwarded = (me - step + n) % n;
      AsyncCopy copy = k.async_remote_copy(slot(forwarded), slot(forwarded), send_sems.at(step % 2),
                                           recv_sems.at(step % 2), {{axis, right}});
      copy.start();
      copy.wait_send();
      copy.wait_recv();
    }
  };
}

ShardMap RingAllGatherProgram(const Mesh& mesh, const std::string& axis, int64_t shard,
                              DType dtype) {
  const int n = mesh.AxisSize(axis);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA(), ScratchSpec::DMA({2}), ScratchSpec::DMA({2})};
  CompilerParams params;
  params.collective_id = 0;  // the kernel uses the barrier semaphore
  PallasCall call = pallas_call("ring_all_gather", RingAllGather(axis, shard), std::move(grid),
                                {{{n * shard}, dtype}}, params);
  return shard_map(mesh, {P{axis}}, {P{}}, std::move(call));
}

}  // namespace tpusim::examples
