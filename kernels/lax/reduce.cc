// lax.psum_scatter (see collectives.h), and the reduce-scatter stage it shares with psum:
// the operand is seen as [rows, X, cols] blocks, so that kernels/reduce_scatter.h's chunked
// ring (or a staged direct reduction) reduces them in place in HBM, through VMEM.

#include <algorithm>
#include <memory>

#include "kernels/lax/calls.h"
#include "kernels/lax/gather.h"
#include "kernels/lax/views.h"
#include "kernels/reduce_scatter.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

// The RingReducer scratch of one direction, as the reducer takes it (from index 0).
Refs ReducerRefs(Kernel& k, const std::string& prefix) {
  static const char* kNames[] = {"recv_buf",  "sum_buf",    "local_buf", "recv_sems",
                                 "send_sems", "local_sems", "credit"};
  Refs refs;
  for (const char* name : kNames)
    refs.push_back(k.ref(prefix + name));
  return refs;
}

}  // namespace

ScatterStage PlanScatterStage(const Mesh& mesh, DType dtype, Reduction reduction,
                              Algorithm algorithm, int ring_size, int64_t rows, int64_t cols,
                              int reducers, double staged_share, const std::string& prefix) {
  ScatterStage st;
  st.algorithm = algorithm;
  st.prefix = prefix;
  if (algorithm == Algorithm::kDirect) {
    st.staged = PlanStaged(mesh, dtype, algorithm, ring_size, rows, cols, staged_share);
    return st;
  }
  // RingChunking{}: chunks sized from the chip's VMEM, shared by every reducer of the call.
  if (algorithm == Algorithm::kRing) {
    st.right = PlanRingReduce(mesh, dtype, RingChunking{}, cols, 0, cols, reducers, rows);
  } else {
    const int64_t half = cols / 2;
    st.right = PlanRingReduce(mesh, dtype, RingChunking{}, cols, 0, half, reducers, rows);
    st.left = PlanRingReduce(mesh, dtype, RingChunking{}, cols, half, cols - half, reducers, rows);
  }
  st.right.reduction = st.left.reduction = reduction;
  return st;
}

void AddScatterScratch(GridSpec& grid, const ScatterStage& stage, DType dtype) {
  auto add = [&](std::vector<ScratchSpec> specs) {
    for (ScratchSpec& s : specs)
      grid.scratch_shapes.push_back(std::move(s));
  };
  if (stage.algorithm == Algorithm::kDirect) {
    add(StagedScratch(stage.staged, dtype, stage.prefix));
    return;
  }
  add(RingReduceScratch(stage.right, dtype, stage.prefix + "right_"));
  if (stage.algorithm == Algorithm::kBidiRing)
    add(RingReduceScratch(stage.left, dtype, stage.prefix + "left_"));
}

void RunScatterStage(Kernel& k, const Ring& ring, const ScatterStage& stage, Reduction reduction,
                     const Ref& x, const Ref& out_block) {
  if (stage.algorithm == Algorithm::kDirect) {
    const bool flat = x.shape().size() == 1;
    const int64_t cols = stage.staged.cols;
    Payload payload = [&](int j) { return flat ? x.at(ds(j * cols, cols)) : IndexDim(x, 1, j); };
    StagedReduce(k, ring, stage.staged, reduction, payload, out_block, stage.prefix);
    return;
  }
  Refs refs = ReducerRefs(k, stage.prefix + "right_");
  if (stage.algorithm == Algorithm::kRing) {
    RingReducer reducer(k, ring, +1, stage.right, x, out_block, refs, 0);
    reducer.Begin();
    while (!reducer.Done())
      reducer.Step();
    reducer.Finish();
    return;
  }
  for (const Ref& r : ReducerRefs(k, stage.prefix + "left_"))
    refs.push_back(r);
  ReduceBothWays(k, ring, stage.right, stage.left, x, out_block, refs, 0);
}

KernelFn Annotated(KernelFn kernel, const CollectivePlan& plan) {
  const std::string name = plan.Describe();
  const base::CorePort::ScopeDetails details = PlanDetails(plan);
  return [kernel = std::move(kernel), name, details](Kernel& k, const Refs& refs) {
    auto scope = k.named_scope(name, details);
    kernel(k, refs);
  };
}

PallasCall MakePsumScatter(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                           const ShapeDtype& out, const CollectivePlan& plan) {
  const Stage& st = plan.stages[0];
  auto groups = st.groups;
  const int n = groups->group_size();
  const int d = spec.axis;
  const int64_t rows = Product(x.shape, 0, d);
  const int64_t cols = Product(x.shape, d + 1, x.shape.size()) * (x.shape[d] / n);
  const ScatterStage stage =
      PlanScatterStage(mesh, x.dtype, spec.reduction, st.algorithm, n, rows, cols, 2, 0.25, "");
  const Algorithm algorithm = st.algorithm;
  const bool closed = st.closed;
  KernelFn kernel = [groups, n, rows, cols, stage, algorithm, closed, reduction = spec.reduction](
                        Kernel& k, const Refs&) {
    const Ref x3 = Reshape(k.ref("x"), {rows, n, cols});
    const Ref out2 = Reshape(k.ref("out"), {rows, cols});
    if (n == 1) {
      CopyLocal(k, IndexDim(x3, 1, 0), out2, k.ref("copy_sem"));
      return;
    }
    const Ring ring = groups->RingOf(k.device_id());
    const Peers peers = PeersOf(algorithm, ring, closed);
    SignalPeers(k, ring, peers, k.barrier_semaphore());
    WaitForPeers(k, peers, k.barrier_semaphore());
    RunScatterStage(k, ring, stage, reduction, x3, out2);
  };
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copy_sem")};
  AddScatterScratch(grid, stage, x.dtype);
  return pallas_call("psum_scatter", std::move(kernel), grid, {out});
}

}  // namespace tpusim::kernels::lax
