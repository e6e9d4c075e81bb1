// lax.all_gather as a bidirectional ring (see collectives.h): the own shard is copied
// into its place in out, then the shards go round the ring HBM to HBM, half each way.

#include <algorithm>

#include "kernels/lax/calls.h"
#include "kernels/lax/views.h"
#include "kernels/ring.h"

namespace tpusim::kernels::lax {

using namespace dsl;

PallasCall MakeAllGather(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                         const ShapeDtype& out) {
  const std::string axis = spec.axes[0];
  const int dim = spec.axis;
  const bool tiled = spec.tiled;
  const int64_t tile = tiled ? x.shape[dim] : 1;
  KernelFn kernel = [axis, dim, tiled, tile](Kernel& k, const Refs&) {
    const Ref &x = k.ref("x"), &out = k.ref("out");
    // Block i of out: where device i's x goes.
    auto block = [&](int i) {
      return tiled ? SliceDim(out, dim, i * tile, tile) : IndexDim(out, dim, i);
    };
    {
      auto scope = k.named_scope("own shard");
      CopyLocal(k, x, block(k.axis_index(axis)), k.ref("local_sem"));
    }
    MeetRingNeighbours(k, axis);
    BidiRingGather(k, axis, block, k.ref("send_sems"), k.ref("recv_sems"));
  };
  const int64_t steps = std::max(mesh.AxisSize(axis) - 1, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"),
                         ScratchSpec::DMA({2, steps}, "send_sems"),
                         ScratchSpec::DMA({2, steps}, "recv_sems")};
  return pallas_call("all_gather", std::move(kernel), grid, {out});
}

}  // namespace tpusim::kernels::lax
