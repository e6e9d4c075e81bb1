// lax.all_gather as a bidirectional ring (see collectives.h): the own shard is copied
// into its place in out, then the shards go round the ring HBM to HBM, half each way.

#include <algorithm>
#include <memory>

#include "kernels/lax/calls.h"
#include "kernels/lax/views.h"
#include "kernels/ring.h"

namespace tpusim::kernels::lax {

using namespace dsl;

PallasCall MakeAllGather(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                         const ShapeDtype& out) {
  auto groups = std::make_shared<const DeviceGroups>(Stages(mesh, spec)[0]);
  const int dim = spec.axis;
  const bool tiled = spec.tiled;
  const int64_t tile = tiled ? x.shape[dim] : 1;
  KernelFn kernel = [groups, dim, tiled, tile](Kernel& k, const Refs&) {
    const Ring ring = groups->RingOf(k.device_id());
    const Ref &x = k.ref("x"), &out = k.ref("out");
    // Block i of out: where device i's x goes.
    auto block = [&](int i) {
      return tiled ? SliceDim(out, dim, i * tile, tile) : IndexDim(out, dim, i);
    };
    {
      auto scope = k.named_scope("own shard");
      CopyLocal(k, x, block(ring.index), k.ref("local_sem"));
    }
    MeetRingNeighbours(k, ring);
    BidiRingGather(k, ring, block, k.ref("send_sems"), k.ref("recv_sems"));
  };
  const int64_t steps = std::max(groups->group_size() - 1, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"),
                         ScratchSpec::DMA({2, steps}, "send_sems"),
                         ScratchSpec::DMA({2, steps}, "recv_sems")};
  return pallas_call("all_gather", std::move(kernel), grid, {out});
}

}  // namespace tpusim::kernels::lax
