// A user's kernel, outside the tpusim tree: a ring all-gather that runs the other way
// round the ring (each device forwards to its LEFT neighbour) and sends each step's shard
// as `kChunks` DMAs in flight at once. The receiver waits once, with one descriptor the
// size of the whole shard: DMA semaphores count bytes, so one wait covers every chunk
// (Pallas semantics; see docs/dsl.md). It registers exactly as the built-in kernels do.

#include <algorithm>
#include <string>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace user_kernel {
namespace {

using namespace tpusim::dsl;
using tpusim::kernels::CollectiveArgs;
using tpusim::kernels::Workload;

constexpr int kChunks = 2;

KernelFn LeftRingChunkedAllGather(std::string axis, int64_t shard) {
  return [axis, shard](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];
    const Ref& out = refs[1];
    const Ref& local_sem = refs[2];
    const Ref& send_sems = refs[3];
    const Ref& recv_sems = refs[4];
    const int n = k.axis_size(axis);
    const int me = k.axis_index(axis);
    const int left = (me + n - 1) % n;
    auto slot = [&](int device) { return out.at(ds(device * shard, shard)); };

    AsyncCopy own = k.async_copy(x, slot(me), local_sem);
    own.start();
    own.wait();
    if (n == 1) return;
    tpusim::kernels::MeetRingNeighbours(k, axis);

    const int64_t chunk = shard / kChunks;
    for (int step = 0; step < n - 1; ++step) {
      auto scope = k.named_scope("left step " + std::to_string(step));
      const int forwarded = (me + step) % n;  // arrived from the right last step
      std::vector<AsyncCopy> chunks;
      for (int c = 0; c < kChunks; ++c) {
        const int64_t size = c + 1 < kChunks ? chunk : shard - chunk * (kChunks - 1);
        const Ref piece = out.at(ds(forwarded * shard + c * chunk, size));
        chunks.push_back(k.async_remote_copy(piece, piece, send_sems.at(step), recv_sems.at(step),
                                             {{axis, left}}));
        chunks.back().start();
      }
      for (auto& copy : chunks)
        copy.wait_send();
      // One whole-shard descriptor, never started: its wait takes all the chunks' bytes.
      k.async_remote_copy(slot(forwarded), slot(forwarded), send_sems.at(step), recv_sems.at(step),
                          {{axis, left}})
          .wait_recv();
    }
  };
}

Workload Make(const Mesh& mesh, const CollectiveArgs& args) {
  const int n = tpusim::kernels::CheckCollectiveArgs(mesh, args, kChunks);
  const int64_t elements = static_cast<int64_t>(args.bytes / SizeOf(args.dtype));
  const int64_t shard = elements / n;
  const int64_t steps = std::max(n - 1, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"), ScratchSpec::DMA({steps}, "send_sems"),
                         ScratchSpec::DMA({steps}, "recv_sems")};
  PallasCall call =
      pallas_call("all_gather_ring_left_chunked", LeftRingChunkedAllGather(args.axis, shard), grid,
                  {{{elements}, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return tpusim::kernels::AllGatherWorkload(mesh, args, std::move(call));
}

// The same bound as the built-in ring: one link direction carries (X-1)/X of V.
const tpusim::kernels::Registration registration(tpusim::kernels::KernelInfo{
    "all_gather_ring_left_chunked",
    "user example: ring all-gather to the left, 2 DMAs in flight per step, one wait", Make,
    tpusim::kernels::RingAllGatherBound, tpusim::kernels::AllGatherBusFactor});

}  // namespace
}  // namespace user_kernel
