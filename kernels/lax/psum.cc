// lax.psum, pmax, pmin and pmean (see collectives.h for the algorithms). The operand is
// reduced as its flat elements. Ring stages reduce-scatter the region they are given and
// keep their block for the next stage; latency stages all-reduce theirs; the ring stages then
// all-gather in reverse order. Elements past the largest multiple of the ring stages' sizes
// (the tail) are all-reduced directly, stage by stage.

#include <algorithm>
#include <memory>

#include "kernels/lax/calls.h"
#include "kernels/lax/gather.h"
#include "kernels/lax/views.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

// Elements a pmean scaling pass moves through VMEM at once.
constexpr int64_t kMeanChunk = 64 * 1024;

bool RingStage(Algorithm a) {
  return a == Algorithm::kRing || a == Algorithm::kBidiRing;
}

// One stage as planned at trace time.
struct PsumStage {
  Stage stage;
  int size = 1;
  ScatterStage scatter;  // ring stages: the reduce-scatter of the region they get
  StagedPlan staged;     // latency stages: the all-reduce of theirs
  StagedPlan tail;       // the tail's direct all-reduce
  std::string prefix;
};

// out = x / count, through f32: acc (HBM, x's dtype) is read in chunks, cast to f32, scaled
// by 1/count and cast to out's dtype (jax.lax.pmean divides; this multiplies by the f32
// reciprocal, which may differ from the quotient in the last bit).
void Mean(Kernel& k, const Ref& acc, const Ref& out, int64_t n, int count) {
  auto scope = k.named_scope("mean");
  const Ref in = k.ref("mean_in"), wide = k.ref("mean_f32"), scale = k.ref("mean_scale"),
            narrow = k.ref("mean_out"), sem = k.ref("copy_sem");
  const int64_t chunk = scale.shape()[0];
  k.fill(scale, 1.0 / count);
  for (int64_t at = 0; at < n; at += chunk) {
    const int64_t size = std::min(chunk, n - at);
    auto part = [&](const Ref& r) { return r.at(ds(0, size)); };
    CopyLocal(k, acc.at(ds(at, size)), part(in), sem);
    k.cast(part(wide), part(in));
    k.multiply(part(wide), part(wide), part(scale));
    k.cast(part(narrow), part(wide));
    CopyLocal(k, part(narrow), out.at(ds(at, size)), sem);
  }
}

}  // namespace

PallasCall MakePsum(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                    const ShapeDtype& out, const CollectivePlan& plan) {
  const int64_t n = NumElements(x.shape);
  int64_t product = 1;
  int reducers = 0, latency_stages = 0, count = 1;
  for (const Stage& st : plan.stages) {
    const int size = st.groups->group_size();
    count *= size;
    if (size < 2) continue;
    if (RingStage(st.algorithm)) {
      product *= size;
      reducers += st.algorithm == Algorithm::kRing ? 1 : 2;
    } else {
      ++latency_stages;
    }
  }
  const int64_t tail = n % product, main = n - tail;
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  std::vector<PsumStage> stages;
  int64_t region = main;
  for (size_t t = 0; t < plan.stages.size(); ++t) {
    PsumStage ps;
    ps.stage = plan.stages[t];
    ps.size = ps.stage.groups->group_size();
    ps.prefix = StagePrefix(t);
    if (ps.size < 2) continue;
    const Algorithm a = ps.stage.algorithm;
    if (region > 0 && RingStage(a)) {
      region /= ps.size;
      ps.scatter = PlanScatterStage(mesh, x.dtype, spec.reduction, a, ps.size, 1, region,
                                    std::max(reducers, 1), 0, ps.prefix);
      AddScatterScratch(grid, ps.scatter, x.dtype);
      for (ScratchSpec& s : GatherScratch(a, ps.size, ps.prefix + "ag_"))
        grid.scratch_shapes.push_back(std::move(s));
    } else if (region > 0) {
      ps.staged = PlanStaged(mesh, x.dtype, a, ps.size, 1, region, 0.25 / latency_stages);
      for (ScratchSpec& s : StagedScratch(ps.staged, x.dtype, ps.prefix))
        grid.scratch_shapes.push_back(std::move(s));
    }
    if (tail > 0) {
      ps.tail = PlanStaged(mesh, x.dtype, Algorithm::kDirect, ps.size, 1, tail);
      for (ScratchSpec& s : StagedScratch(ps.tail, x.dtype, ps.prefix + "tail_"))
        grid.scratch_shapes.push_back(std::move(s));
    }
    stages.push_back(std::move(ps));
  }
  // An integer pmean sums in x's dtype (an HBM scratch) before its f32 result.
  const bool separate_sum = out.dtype != x.dtype;
  if (separate_sum) grid.scratch_shapes.push_back(ScratchSpec::HBM({n}, x.dtype, "sum"));
  if (spec.mean) {
    const int64_t chunk = std::clamp<int64_t>(n, 1, kMeanChunk);
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({chunk}, x.dtype, "mean_in"));
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({chunk}, DType::kF32, "mean_f32"));
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({chunk}, DType::kF32, "mean_scale"));
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({chunk}, out.dtype, "mean_out"));
  }
  const Reduction reduction = spec.reduction;
  const bool mean = spec.mean;
  KernelFn kernel = [n, main, tail, stages, reduction, mean, separate_sum, count](Kernel& k,
                                                                                  const Refs&) {
    const Ref in = Reshape(k.ref("x"), {n});
    const Ref acc = Reshape(k.ref(separate_sum ? "sum" : "out"), {n});
    const int me = k.device_id();
    if (stages.empty()) {
      CopyLocal(k, in, acc, k.ref("copy_sem"));
    } else {
      // Meet every peer of every stage before the first DMA: a later stage's peer may not
      // have entered the kernel yet. Ring stages reduce round the whole ring (both
      // neighbours); the tail goes to everyone.
      std::vector<Ring> rings;
      std::vector<Peers> peers;
      for (const PsumStage& ps : stages) {
        rings.push_back(ps.stage.groups->RingOf(me));
        peers.push_back(PeersOf(tail > 0 ? Algorithm::kDirect : ps.stage.algorithm, rings.back(),
                                /*closed=*/true));
        SignalPeers(k, rings.back(), peers.back(), k.barrier_semaphore());
      }
      for (const Peers& p : peers)
        WaitForPeers(k, p, k.barrier_semaphore());
      Ref src = in;
      int64_t offset = 0, size = main;
      for (size_t t = 0; t < stages.size() && size > 0; ++t) {
        const PsumStage& ps = stages[t];
        const Ring& ring = rings[t];
        auto scope = k.named_scope(std::string(AlgorithmName(ps.stage.algorithm)) + " over " +
                                   ps.stage.over);
        if (RingStage(ps.stage.algorithm)) {
          const int64_t q = size / ps.size;
          auto rs = k.named_scope("reduce-scatter");
          RunScatterStage(k, ring, ps.scatter, reduction, src.at(ds(offset, size)),
                          acc.at(ds(offset + ring.index * q, q)));
          offset += ring.index * q;
          size = q;
        } else {
          const Ref part = src.at(ds(offset, size));
          StagedReduce(
              k, ring, ps.staged, reduction, [&](int) { return part; }, acc.at(ds(offset, size)),
              ps.prefix);
        }
        src = acc;
      }
      for (size_t t = stages.size(); t-- > 0 && main > 0;) {
        const PsumStage& ps = stages[t];
        if (!RingStage(ps.stage.algorithm)) continue;
        const Ring& ring = rings[t];
        auto scope = k.named_scope("all-gather over " + ps.stage.over);
        const int64_t base = offset - ring.index * size;
        const int64_t block = size;
        Unit unit = [&](int i) { return std::vector<Ref>{acc.at(ds(base + i * block, block))}; };
        Gather(k, ps.stage.algorithm, ring, ps.stage.closed, unit, k.ref(ps.prefix + "ag_send"),
               k.ref(ps.prefix + "ag_recv"));
        offset = base;
        size *= ps.size;
      }
      if (tail > 0) {
        auto scope = k.named_scope("tail");
        Ref tail_src = in;
        for (size_t t = 0; t < stages.size(); ++t) {
          const Ref part = tail_src.at(ds(main, tail));
          StagedReduce(
              k, rings[t], stages[t].tail, reduction, [&](int) { return part; },
              acc.at(ds(main, tail)), stages[t].prefix + "tail_");
          tail_src = acc;
        }
      }
    }
    if (mean) Mean(k, acc, Reshape(k.ref("out"), {n}), n, count);
  };
  return pallas_call("psum", std::move(kernel), grid, {out});
}

}  // namespace tpusim::kernels::lax
