// A user's kernel, outside the tpusim tree: a ring all-gather that runs the other way
// round the ring (each device forwards to its LEFT neighbour) and sends each step's shard
// as `kChunks` DMAs in flight at once. The receiver waits once, with one descriptor the
// size of the whole shard: DMA semaphores count bytes, so one wait covers every chunk
// (Pallas semantics; see docs/dsl.md). It registers exactly as the built-in kernels do.

#include "all_gather_ring_left_chunked.h"

#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "kernels/all_gather.h"
#include "kernels/ring.h"

namespace user_kernel {

using namespace tpusim::dsl;
using tpusim::kernels::CollectiveArgs;

namespace {

constexpr int kChunks = 2;

KernelFn LeftRingChunkedAllGather(std::string axis, int64_t shard) {
  return [axis, shard](Kernel& k, const Refs&) {
    // The operands by the names the call gives them (AllGatherCall).
    const Ref& out = k.ref("out");
    const auto [send_sems, recv_sems] = k.refs("send_sems", "recv_sems");
    const Ring ring = k.ring(axis);
    auto slot = [&](int index) { return out.at(ds(index * shard, shard)); };

    AsyncCopy own = k.async_copy(k.ref("x"), slot(ring.index), k.ref("local_sem"));
    own.start();
    own.wait();
    if (ring.size == 1) return;
    tpusim::kernels::MeetRingNeighbours(k, axis);

    const int64_t chunk = shard / kChunks;
    for (int step = 0; step < ring.size - 1; ++step) {
      auto scope = k.named_scope("left step " + std::to_string(step));
      const int forwarded = ring.index_at(step);  // arrived from the right last step
      std::vector<AsyncCopy> chunks;
      for (int c = 0; c < kChunks; ++c) {
        const int64_t size = c + 1 < kChunks ? chunk : shard - chunk * (kChunks - 1);
        const Ref piece = out.at(ds(forwarded * shard + c * chunk, size));
        chunks.push_back(k.async_remote_copy(piece, piece, send_sems.at(step), recv_sems.at(step),
                                             ring.left_device()));
        chunks.back().start();
      }
      for (auto& copy : chunks)
        copy.wait_send();
      // One whole-shard descriptor, never started: its wait takes all the chunks' bytes.
      k.async_remote_copy(slot(forwarded), slot(forwarded), send_sems.at(step), recv_sems.at(step),
                          ring.left_device())
          .wait_recv();
    }
  };
}

}  // namespace

PallasCall LeftRingChunkedAllGatherCall(const Mesh& mesh, const CollectiveArgs& args) {
  return tpusim::kernels::AllGatherCall(
      mesh, args, "all_gather_ring_left_chunked",
      [&](int64_t shard) { return LeftRingChunkedAllGather(args.axis, shard); }, kChunks);
}

namespace {

// The same bound as the built-in ring: one link direction carries (X-1)/X of V.
const tpusim::kernels::Registration registration(tpusim::kernels::KernelInfo{
    "all_gather_ring_left_chunked",
    "user example: ring all-gather to the left, 2 DMAs in flight per step, one wait",
    [](const Mesh& mesh, const CollectiveArgs& args) {
      return tpusim::kernels::AllGatherWorkload(mesh, args,
                                                LeftRingChunkedAllGatherCall(mesh, args));
    },
    tpusim::kernels::RingAllGatherBound, tpusim::kernels::AllGatherBusFactor});

}  // namespace
}  // namespace user_kernel
