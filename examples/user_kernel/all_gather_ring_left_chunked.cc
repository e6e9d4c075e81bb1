// A user's kernel, outside the tpusim tree: a ring all-gather that runs the other way
// round the ring (each device forwards to its LEFT neighbour) and sends each step's shard
// as `chunks` DMAs in flight at once. The receiver waits once, with one descriptor the
// size of the whole shard: DMA semaphores count bytes, so one wait covers every chunk
// (Pallas semantics; see docs/dsl.md). It registers exactly as the built-in kernels do,
// and declares its parameters as they do: the shared axis, bytes and dtype, and its own
// `chunks`, which `tpusim run all_gather_ring_left_chunked --load ... --chunks 4` sets.

#include "all_gather_ring_left_chunked.h"

#include <algorithm>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "kernels/all_gather.h"
#include "kernels/ring.h"

namespace user_kernel {

using namespace tpusim::dsl;
using tpusim::kernels::CollectiveProblem;
using tpusim::kernels::Param;
using tpusim::kernels::Params;
using tpusim::kernels::Workload;

namespace {

KernelFn LeftRingChunkedAllGather(std::string axis, int64_t shard, int64_t chunks) {
  return [axis, shard, chunks](Kernel& k, const Refs&) {
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

    const int64_t chunk = shard / chunks;  // the last chunk takes the remainder
    for (int step = 0; step < ring.size - 1; ++step) {
      auto scope = k.named_scope("left step " + std::to_string(step));
      const int forwarded = ring.index_at(step);  // arrived from the right last step
      std::vector<AsyncCopy> copies;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t size = c + 1 < chunks ? chunk : shard - chunk * (chunks - 1);
        const Ref piece = out.at(ds(forwarded * shard + c * chunk, size));
        copies.push_back(k.async_remote_copy(piece, piece, send_sems.at(step % 2),
                                             recv_sems.at(step % 2), ring.left_device()));
        copies.back().start();
      }
      for (auto& copy : copies)
        copy.wait_send();
      // One whole-shard descriptor, never started: its wait takes all the chunks' bytes.
      k.async_remote_copy(slot(forwarded), slot(forwarded), send_sems.at(step % 2),
                          recv_sems.at(step % 2), ring.left_device())
          .wait_recv();
    }
  };
}

}  // namespace

Param ChunksParam() {
  return Param::Int("chunks", "DMAs each ring step's shard is cut into, all in flight at once")
      .Unit("DMAs")
      .Default(2)
      .Range(1, 64);
}

PallasCall LeftRingChunkedAllGatherCall(const Mesh& mesh, const CollectiveProblem& problem,
                                        int64_t chunks) {
  return tpusim::kernels::AllGatherCall(
      mesh, problem, "all_gather_ring_left_chunked", [&](int64_t shard) {
        // A shard of fewer elements than chunks is sent an element per DMA.
        return LeftRingChunkedAllGather(problem.axis, shard, std::min(chunks, shard));
      });
}

namespace {

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = tpusim::kernels::CollectiveProblemOf(params);
  return tpusim::kernels::AllGatherWorkload(
      mesh, problem, LeftRingChunkedAllGatherCall(mesh, problem, params.Int("chunks")));
}

// The same bound as the built-in ring: one link direction carries (X-1)/X of V.
const tpusim::kernels::Registration registration(tpusim::kernels::KernelInfo{
    "all_gather_ring_left_chunked",
    "user example: ring all-gather to the left, several DMAs in flight per step, one wait",
    tpusim::kernels::ParamList(tpusim::kernels::CollectiveParams(), ChunksParam()), Make,
    tpusim::kernels::RingAllGatherBound, tpusim::kernels::AllGatherBusFactor});

}  // namespace
}  // namespace user_kernel
