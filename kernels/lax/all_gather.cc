// lax.all_gather (see collectives.h): the own shard is copied into its place in out, then
// each stage of the plan gathers HBM to HBM with its algorithm (kernels/lax/gather.h). With
// several stages (replica groups spanning several torus axes), stage t gathers, along one
// axis, the blocks each device collected in the stages before it.

#include <algorithm>
#include <memory>

#include "kernels/lax/calls.h"
#include "kernels/lax/gather.h"
#include "kernels/lax/views.h"
#include "kernels/ring.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

// By stage and device: the positions in the whole group of the blocks the device holds when
// the stage starts (its own at the first; at stage t those of every member of its stage t-1
// line, each with what that member held).
using Holdings = std::vector<std::vector<std::vector<int>>>;

Holdings HoldingsOf(const Mesh& mesh, const DeviceGroups& whole, const std::vector<Stage>& stages) {
  Holdings held(stages.size(), std::vector<std::vector<int>>(static_cast<size_t>(mesh.devices())));
  for (int d = 0; d < mesh.devices(); ++d)
    held[0][d] = {whole.RingOf(d).index};
  for (size_t t = 1; t < stages.size(); ++t) {
    for (int d = 0; d < mesh.devices(); ++d) {
      const Ring line = stages[t - 1].groups->RingOf(d);
      for (int i = 0; i < line.size; ++i) {
        const std::vector<int>& theirs = held[t - 1][line.device_at(i)];
        held[t][d].insert(held[t][d].end(), theirs.begin(), theirs.end());
      }
    }
  }
  return held;
}

}  // namespace

PallasCall MakeAllGather(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                         const ShapeDtype& out, const CollectivePlan& plan) {
  auto whole = std::make_shared<const DeviceGroups>(GroupsOf(mesh, spec));
  const std::vector<Stage> stages = plan.stages;
  auto held = std::make_shared<const Holdings>(HoldingsOf(mesh, *whole, stages));
  const int dim = spec.axis;
  const bool tiled = spec.tiled;
  const int64_t tile = tiled ? x.shape[dim] : 1;
  KernelFn kernel = [whole, stages, held, dim, tiled, tile](Kernel& k, const Refs&) {
    const Ref &x = k.ref("x"), &out = k.ref("out");
    const int me = k.device_id();
    // Block i of out: where the device at position i of the whole group puts its x.
    auto block = [&](int i) {
      return tiled ? SliceDim(out, dim, i * tile, tile) : IndexDim(out, dim, i);
    };
    {
      auto scope = k.named_scope("own shard");
      CopyLocal(k, x, block(whole->RingOf(me).index), k.ref("local_sem"));
    }
    std::vector<Ring> rings;
    std::vector<Peers> peers;
    for (const Stage& st : stages) {
      rings.push_back(st.groups->RingOf(me));
      peers.push_back(PeersOf(st.algorithm, rings.back(), st.closed));
      SignalPeers(k, rings.back(), peers.back(), k.barrier_semaphore());
    }
    for (const Peers& p : peers)
      WaitForPeers(k, p, k.barrier_semaphore());
    for (size_t t = 0; t < stages.size(); ++t) {
      const Ring& ring = rings[t];
      auto scope = k.named_scope(std::string(AlgorithmName(stages[t].algorithm)) + " over " +
                                 stages[t].over);
      Unit unit = [&](int index) {
        std::vector<Ref> views;
        for (int position : (*held)[t][ring.device_at(index)])
          views.push_back(block(position));
        return views;
      };
      const std::string prefix = StagePrefix(t);
      Gather(k, stages[t].algorithm, ring, stages[t].closed, unit, k.ref(prefix + "send"),
             k.ref(prefix + "recv"));
    }
  };
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem")};
  for (size_t t = 0; t < stages.size(); ++t) {
    for (ScratchSpec& s :
         GatherScratch(stages[t].algorithm, stages[t].groups->group_size(), StagePrefix(t)))
      grid.scratch_shapes.push_back(std::move(s));
  }
  return pallas_call("all_gather", std::move(kernel), grid, {out});
}

}  // namespace tpusim::kernels::lax
