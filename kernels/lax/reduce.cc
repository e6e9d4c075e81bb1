// lax.psum_scatter and lax.psum (see collectives.h for the algorithms). Both see the
// operand as [rows, X, cols] blocks so that kernels/reduce_scatter.h's chunked ring
// reduces them in place in HBM, through VMEM.

#include <algorithm>
#include <memory>

#include "kernels/lax/calls.h"
#include "kernels/lax/views.h"
#include "kernels/reduce_scatter.h"
#include "kernels/ring.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

// The two directions of a ring over blocks of `cols` columns: the first half of the
// columns rightwards, the rest leftwards.
std::pair<RingReducePlan, RingReducePlan> BothWays(const Mesh& mesh, const ShapeDtype& x,
                                                   int64_t cols, int64_t rows, int reducers,
                                                   Reduction reduction) {
  const int64_t half = cols / 2;
  // RingChunking{}: chunks sized from the chip's VMEM.
  std::pair<RingReducePlan, RingReducePlan> plans = {
      PlanRingReduce(mesh, x.dtype, RingChunking{}, cols, 0, half, reducers, rows),
      PlanRingReduce(mesh, x.dtype, RingChunking{}, cols, half, cols - half, reducers, rows)};
  plans.first.reduction = plans.second.reduction = reduction;
  return plans;
}

void AddScratch(GridSpec& grid, const std::pair<RingReducePlan, RingReducePlan>& plans, DType dtype,
                const std::string& prefix) {
  for (auto& s : RingReduceScratch(plans.first, dtype, prefix + "right_"))
    grid.scratch_shapes.push_back(s);
  for (auto& s : RingReduceScratch(plans.second, dtype, prefix + "left_"))
    grid.scratch_shapes.push_back(s);
}

GridSpec AnyOperands() {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  return grid;
}

// One axis (or the replica groups) of a psum, as planned at trace time: scratch from
// `first` on.
struct PsumStage {
  std::shared_ptr<const DeviceGroups> groups;
  std::string name;  // the axis, or "replica groups"
  int size = 1;
  int64_t block = 0;      // q: elements of each of the X ring blocks
  int64_t remainder = 0;  // r = n - X q: summed directly
  std::pair<RingReducePlan, RingReducePlan> plans;
  size_t first = 0;
};

// The r < X elements that do not fill a ring block: gathered round the ring into VMEM,
// then added in device order (the same order on every device, so every copy agrees).
void SumRemainder(Kernel& k, const PsumStage& st, const Ring& ring, Reduction reduction,
                  const Ref& in, const Ref& out, const Refs& refs) {
  auto scope = k.named_scope("remainder");
  const size_t r = st.first + 2 * kRingReduceScratchCount + 2;
  const Ref& buf = refs[r];
  const Ref& sum = refs[r + 1];
  const int64_t start = st.size * st.block;
  CopyLocal(k, in.at(ds(start, st.remainder)), buf.at(ring.index), refs[2]);
  BidiRingGather(
      k, ring, [&](int i) { return buf.at(i); }, refs[r + 2], refs[r + 3]);
  Combine(k, reduction, sum, buf.at(0), buf.at(1));
  for (int i = 2; i < st.size; ++i)
    Combine(k, reduction, sum, sum, buf.at(i));
  CopyLocal(k, sum, out.at(ds(start, st.remainder)), refs[2]);
}

}  // namespace

PallasCall MakePsumScatter(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                           const ShapeDtype& out) {
  auto groups = std::make_shared<const DeviceGroups>(Stages(mesh, spec)[0]);
  const int n = groups->group_size();
  const int d = spec.axis;
  const int64_t rows = Product(x.shape, 0, d);
  const int64_t cols = Product(x.shape, d + 1, x.shape.size()) * (x.shape[d] / n);
  const auto plans = BothWays(mesh, x, cols, rows, 2, spec.reduction);
  KernelFn kernel = [groups, n, rows, cols, plans](Kernel& k, const Refs& refs) {
    const Ref x3 = Reshape(refs[0], {rows, n, cols});
    const Ref out2 = Reshape(refs[1], {rows, cols});
    if (n == 1) {
      CopyLocal(k, IndexDim(x3, 1, 0), out2, refs[2]);
      return;
    }
    const Ring ring = groups->RingOf(k.device_id());
    MeetRingNeighbours(k, ring);
    ReduceBothWays(k, ring, plans.first, plans.second, x3, out2, refs, 3);
  };
  GridSpec grid = AnyOperands();
  AddScratch(grid, plans, x.dtype, "");
  return pallas_call("psum_scatter", std::move(kernel), grid, {out});
}

PallasCall MakePsum(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  const int64_t n = NumElements(x.shape);
  GridSpec grid = AnyOperands();
  std::vector<DeviceGroups> groups = Stages(mesh, spec);
  const int64_t stages = static_cast<int64_t>(groups.size());
  grid.scratch_shapes.push_back(ScratchSpec::REGULAR({stages}, "stage_barrier"));
  std::vector<PsumStage> plan;
  for (size_t s = 0; s < groups.size(); ++s) {
    PsumStage st;
    st.groups = std::make_shared<const DeviceGroups>(std::move(groups[s]));
    st.size = st.groups->group_size();
    if (st.size == 1) continue;
    st.block = n / st.size;
    st.remainder = n % st.size;
    st.plans = BothWays(mesh, x, st.block, 1, 2 * static_cast<int>(stages), spec.reduction);
    st.first = grid.scratch_shapes.size() + 2;  // refs: x, out, then the scratch
    st.name = spec.groups.empty() ? spec.axes[s] : std::string("replica groups");
    const std::string prefix = (spec.groups.empty() ? spec.axes[s] : std::string("groups")) + "_";
    AddScratch(grid, st.plans, x.dtype, prefix);
    const int64_t steps = st.size - 1;
    grid.scratch_shapes.push_back(ScratchSpec::DMA({2, steps}, prefix + "gather_send"));
    grid.scratch_shapes.push_back(ScratchSpec::DMA({2, steps}, prefix + "gather_recv"));
    if (st.remainder > 0) {
      grid.scratch_shapes.push_back(
          ScratchSpec::VMEM({st.size, st.remainder}, x.dtype, prefix + "remainder"));
      grid.scratch_shapes.push_back(ScratchSpec::VMEM({st.remainder}, x.dtype, prefix + "rem_sum"));
      grid.scratch_shapes.push_back(ScratchSpec::DMA({2, steps}, prefix + "rem_send"));
      grid.scratch_shapes.push_back(ScratchSpec::DMA({2, steps}, prefix + "rem_recv"));
    }
    plan.push_back(st);
  }
  const Reduction reduction = spec.reduction;
  KernelFn kernel = [n, plan, reduction](Kernel& k, const Refs& refs) {
    const Ref out = Reshape(refs[1], {n});
    Ref in = Reshape(refs[0], {n});
    if (plan.empty()) {
      CopyLocal(k, in, out, refs[2]);
      return;
    }
    // Meet every neighbour of every stage before the first DMA: a later stage's neighbour
    // may not have entered the kernel yet.
    std::vector<Ring> rings;
    for (const PsumStage& st : plan) {
      rings.push_back(st.groups->RingOf(k.device_id()));
      MeetRingNeighbours(k, rings.back());
    }
    for (size_t s = 0; s < plan.size(); ++s) {
      const PsumStage& st = plan[s];
      const Ring& ring = rings[s];
      const char* op = reduction == Reduction::kMax   ? "pmax"
                       : reduction == Reduction::kMin ? "pmin"
                                                      : "psum";
      auto scope = k.named_scope(std::string(op) + " over " + st.name);
      // A neighbour that has not finished the previous stage may still be writing the
      // out blocks this stage reads.
      if (s > 0) MeetRingNeighbours(k, ring, refs[3].at(static_cast<int64_t>(s)));
      if (st.remainder > 0) SumRemainder(k, st, ring, reduction, in, out, refs);
      if (st.block > 0) {
        const int me = ring.index;
        {
          auto reduce = k.named_scope("reduce-scatter");
          ReduceBothWays(k, ring, st.plans.first, st.plans.second, in.at(ds(0, st.size * st.block)),
                         out.at(ds(me * st.block, st.block)), refs, st.first);
        }
        auto gather = k.named_scope("all-gather");
        const size_t g = st.first + 2 * kRingReduceScratchCount;
        BidiRingGather(
            k, ring, [&](int i) { return out.at(ds(i * st.block, st.block)); }, refs[g],
            refs[g + 1]);
      }
      in = out;  // the next axis reduces this one's result in place
    }
  };
  return pallas_call("psum", std::move(kernel), grid, {x});
}

}  // namespace tpusim::kernels::lax
