// Both operands sharded on the contracting dim, along different mesh axes:
// inputs[M_x, K_y] x weights[K_x, N] -> out[M_x, N] (replicated over y). Device (i, j) holds
// A_ij = inputs[rows i, K-chunk j] and W_i = weights[K-block i, :]. Its share of the
// product is A_ij @ weights[K-chunk j, :], and out's rows i are the sum over j of those
// shares: an all-reduce over y. The K-chunk j (K/Y rows) lives in the x-blocks of weights
// that overlap it, held by the devices (i', j) of this device's x-column. Two schedules:
//   agw_matmul_ar:       ring all-gather of the whole weights over x into HBM, slice the
//                        rows of K-chunk j, multiply, then all-reduce the partial over y.
//                        Every phase is exposed, and it moves all of W, not just chunk j.
//   agw_matmul_ar_fused: only the rows of K-chunk j move, pushed by their owners in column
//                        chunks of N; each device multiplies the rows it already holds
//                        first, multiplies chunk c while chunk c+1's weights move, and
//                        all-reduces chunk c over y while it multiplies chunk c+1.
// Both cut N into C column chunks; an all-reduce step works on one chunk. Any mesh with
// two distinct axes works (2x2 is the case): the overlaps of the x-blocks and
// y-chunks of K are computed, so X and Y need not be equal. Partials travel in f32 (see
// kernels/matmul_rs.cc for why).
//
// When A_ij [M/X, K/Y] does not fit in VMEM next to the chunks' buffers, both schedules
// leave it in HBM and stream it through VMEM in k blocks once per column chunk
// (kernels/agw_matmul_plan.h says when).

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "kernels/agw_all_reduce.h"
#include "kernels/agw_matmul.h"
#include "kernels/agw_matmul_plan.h"
#include "kernels/matmul.h"
#include "kernels/registry.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

AgwMatmulProblem ProblemOf(const Params& params) {
  AgwMatmulProblem problem;
  problem.x_axis = params.String("axis");
  if (params.Has("axis2")) problem.y_axis = params.String("axis2");
  problem.m = params.Int("m");
  problem.k = params.Int("k");
  problem.n = params.Int("n");
  if (params.Has("bn")) problem.column_chunk = params.Int("bn");
  problem.dtype = DTypeOf(params);
  return problem;
}

// Nobody may DMA into or signal a device that has not entered the kernel: meet every
// device of our x-column (weights move between any two of them) and both y neighbours.
void Barrier(Kernel& k, const AgwBlocks& b) {
  const int i = k.axis_index(b.x_axis), j = k.axis_index(b.y_axis);
  const Ref barrier = k.barrier_semaphore();
  int64_t expected = 0;
  for (int t = 0; t < b.x; ++t) {
    if (t == i) continue;
    k.signal(barrier, 1, {{b.x_axis, t}});
    ++expected;
  }
  if (b.y > 1) {
    k.signal(barrier, 1, {{b.y_axis, (j + b.y - 1) % b.y}});
    k.signal(barrier, 1, {{b.y_axis, (j + 1) % b.y}});
    expected += 2;
  }
  if (expected > 0) k.wait(barrier, expected);
}

// partial[par, blk] (+)= A_ij[:, col : col + R] @ w_rows[:, block blk] for every
// all-reduce block blk, where w_rows is [R, nc] in VMEM. A_ij is read in place from
// "a_vmem" or, streamed, comes from `a` in HBM in [bm, tk] blocks, the next one moving
// while the MXU multiplies this one. `after_dot` runs after every dot.
void MultiplyRows(Kernel& k, const AgwBlocks& b, const Ref& a, int64_t col, const Ref& w_rows,
                  int par, bool accumulate, const std::function<void()>& after_dot) {
  const int64_t rows = w_rows.shape()[0];
  const Ref& partial = k.ref("partial");
  auto dots = [&](const Ref& a_cols, int64_t row, int64_t count, bool acc) {
    for (int blk = 0; blk < b.y; ++blk) {
      k.dot(a_cols, w_rows.at(ds(row, count), ds(blk * b.nb, b.nb)), partial.at(par, blk), acc);
      if (after_dot) after_dot();
    }
  };
  if (!b.streamed()) {
    const Ref& a_vmem = k.ref("a_vmem");
    dots(rows == b.kk ? a_vmem : a_vmem.at(ds(0, b.bm), ds(col, rows)), 0, rows, accumulate);
    return;
  }
  emit_pipeline(k,
                [&](const std::vector<int>& ids, const Refs& blocks) {
                  dots(blocks[0], ids[0] * b.tk, b.tk, accumulate || ids[0] > 0);
                },
                {static_cast<int>(rows / b.tk)},
                {BlockSpec({b.bm, b.tk},
                           [](int kb) {
                             return BlockIndex{0, kb};
                           })},
                {}, {a.at(ds(0, b.bm), ds(col, rows))}, {}, {"arbitrary"});
}

// Resident: starts loading A_ij into VMEM, which the first dot waits for.
std::optional<AsyncCopy> StartLoadA(Kernel& k, const AgwBlocks& b, const Ref& a) {
  if (b.streamed()) return std::nullopt;
  AsyncCopy load = k.async_copy(a, k.ref("a_vmem"), k.ref("local_sems").at(2));
  load.start();
  return load;
}

KernelFn Blocking(AgwBlocks b) {
  return [b](Kernel& k, const Refs& r) {
    const Ref &a = r[0], &w = r[1], &out = r[2];
    const Ref &w_bufs = k.ref("w_bufs"), &local_sems = k.ref("local_sems");
    const Ref &w_full = k.ref("w_full"), &gather_send = k.ref("gather_send"),
              &gather_recv = k.ref("gather_recv");
    const AgwArRefs ar = AgwArRefs::Of(k);
    const int i = k.axis_index(b.x_axis), j = k.axis_index(b.y_axis);
    std::optional<AsyncCopy> load_a = StartLoadA(k, b, a);
    Barrier(k, b);
    {
      // A ring all-gather of the weights over x into HBM, as all_gather_ring does.
      auto scope = k.named_scope("all-gather weights");
      AsyncCopy own = k.async_copy(w, w_full.at(ds(i * b.kx, b.kx)), local_sems.at(0));
      own.start();
      own.wait();
      for (int s = 0; s < b.x - 1; ++s) {
        const Ref held = w_full.at(ds((i - s + b.x) % b.x * b.kx, b.kx));
        AsyncCopy copy = k.async_remote_copy(held, held, gather_send.at(s), gather_recv.at(s),
                                             {{b.x_axis, (i + 1) % b.x}});
        copy.start();
        copy.wait_send();
        copy.wait_recv();
      }
    }
    if (load_a) load_a->wait();
    // The rows of K-chunk j, a column chunk at a time, double-buffered from HBM.
    auto load_w = [&](int64_t c) {
      AsyncCopy copy = k.async_copy(w_full.at(ds(j * b.kk, b.kk), ds(c * b.nc, b.nc)),
                                    w_bufs.at(c % 2), local_sems.at(c % 2));
      copy.start();
      return copy;
    };
    auto stores = ChunkAllReduce::NoStores(b.y);
    AsyncCopy next = load_w(0);
    for (int64_t c = 0; c < b.c; ++c) {
      const int par = static_cast<int>(c % 2);
      AsyncCopy current = next;
      if (c + 1 < b.c) next = load_w(c + 1);
      {
        auto scope = k.named_scope("matmul chunk " + std::to_string(c));
        current.wait();
        MultiplyRows(k, b, a, 0, w_bufs.at(par), par, /*accumulate=*/false, {});
      }
      ChunkAllReduce reduce(k, b, ar, out, c, stores);
      reduce.Start();
      reduce.Finish(c + 2 < b.c);
    }
    ChunkAllReduce::Drain(stores);
  };
}

KernelFn Fused(AgwBlocks b) {
  return [b](Kernel& k, const Refs& r) {
    const Ref &a = r[0], &w = r[1], &out = r[2];
    const Ref &w_bufs = k.ref("w_bufs"), &local_sems = k.ref("local_sems");
    const Ref &w_send_sems = k.ref("w_send_sems"), &w_recv_sems = k.ref("w_recv_sems"),
              &w_credit = k.ref("w_credit");
    const AgwArRefs ar = AgwArRefs::Of(k);
    const int i = k.axis_index(b.x_axis), j = k.axis_index(b.y_axis);
    const std::vector<AgwPiece> pieces = PiecesOf(b, i, j);
    // As an owner: the rows of K-chunk j we hold go to every other device of the column.
    const AgwPiece mine = Overlap(b, i, j);
    const int targets = mine.rows() > 0 ? b.x - 1 : 0;
    auto w_slot = [&](int64_t c, const AgwPiece& p) {
      return w_bufs.at(c % 2, ds(p.begin - j * b.kk, p.rows()));
    };
    auto w_source = [&](int64_t c, const AgwPiece& p) {
      return w.at(ds(p.begin - p.owner * b.kx, p.rows()), ds(c * b.nc, b.nc));
    };
    std::vector<std::vector<AsyncCopy>> pushes(2);
    auto push = [&](int64_t c) {
      const int par = static_cast<int>(c % 2);
      for (AsyncCopy& p : pushes[par])
        p.wait_send();
      pushes[par].clear();
      // Each target's slot of this parity held chunk c-2 until it said it was done.
      if (c >= 2 && targets > 0) k.wait(w_credit.at(par), targets);
      for (int t = 0; t < b.x && targets > 0; ++t) {
        if (t == i) continue;
        pushes[par].push_back(k.async_remote_copy(w_source(c, mine), w_slot(c, mine),
                                                  w_send_sems.at(par, t), w_recv_sems.at(par, i),
                                                  {{b.x_axis, t}}));
        pushes[par].back().start();
      }
    };
    std::vector<std::optional<AsyncCopy>> local_loads(2);
    auto load_local = [&](int64_t c) {
      if (pieces.front().owner != i) return;
      AsyncCopy copy = k.async_copy(w_source(c, pieces.front()), w_slot(c, pieces.front()),
                                    local_sems.at(c % 2));
      copy.start();
      local_loads[c % 2] = copy;
    };

    std::optional<AsyncCopy> load_a = StartLoadA(k, b, a);
    load_local(0);
    Barrier(k, b);
    push(0);
    if (load_a) load_a->wait();
    auto stores = ChunkAllReduce::NoStores(b.y);
    std::optional<ChunkAllReduce> previous;
    // The previous chunk's all-reduce moves while the MXU works.
    const auto advance_previous = [&] {
      if (previous && previous->Pending()) previous->Advance();
    };
    for (int64_t c = 0; c < b.c; ++c) {
      const int par = static_cast<int>(c % 2);
      if (c + 1 < b.c) {
        push(c + 1);
        load_local(c + 1);
      }
      {
        auto scope = k.named_scope("matmul chunk " + std::to_string(c));
        for (size_t p = 0; p < pieces.size(); ++p) {
          const AgwPiece& piece = pieces[p];
          if (piece.owner == i) {
            local_loads[par]->wait();
            local_loads[par].reset();
          } else {
            // Our own descriptor of the same size: the owner's push lands on our
            // w_recv_sems[par][owner].
            AsyncCopy incoming = k.async_remote_copy(
                w_slot(c, piece), w_slot(c, piece), w_send_sems.at(par, piece.owner),
                w_recv_sems.at(par, piece.owner), {{b.x_axis, piece.owner}});
            incoming.wait_recv();
          }
          MultiplyRows(k, b, a, piece.begin - j * b.kk, w_slot(c, piece), par,
                       /*accumulate=*/p > 0, advance_previous);
        }
      }
      // Our weight slots of this parity are read: their owners may push chunk c + 2.
      if (c + 2 < b.c) {
        for (const AgwPiece& piece : pieces) {
          if (piece.owner != i) k.signal(w_credit.at(par), 1, {{b.x_axis, piece.owner}});
        }
      }
      if (previous) previous->Finish(c + 1 < b.c);
      previous.emplace(k, b, ar, out, c, stores);
      previous->Start();
    }
    previous->Finish(false);
    for (auto& parity : pushes) {
      for (AsyncCopy& p : parity)
        p.wait_send();
    }
    ChunkAllReduce::Drain(stores);
  };
}

Workload Make(const Mesh& mesh, const Params& params, bool fused) {
  const AgwMatmulProblem problem = ProblemOf(params);
  const AgwBlocks b = PlanAgwMatmul(mesh, problem);
  const P in_spec{b.x_axis, b.y_axis};
  const P w_spec{b.x_axis, nullptr};
  const P out_spec{b.x_axis, nullptr};
  Workload wl{
      shard_map(mesh, {in_spec, w_spec}, {out_spec}, AgwMatmulCall(mesh, problem, fused)), {}, {}};
  AddMatmulOperands(wl, MatmulProblemOf(params));
  return wl;
}

double FlopsPerChip(const Mesh& mesh, const Params& params) {
  const AgwBlocks b = PlanAgwMatmul(mesh, ProblemOf(params));
  return 2.0 * b.bm * b.kk * b.n;
}

Bound AgwBound(const Mesh& mesh, const Params& params) {
  const AgwBlocks b = PlanAgwMatmul(mesh, ProblemOf(params));
  const double compute = MxuPeakSeconds(mesh, FlopsPerChip(mesh, params), b.dtype);
  // Weights: the rows of K-chunk j this device does not hold must arrive over x; at best
  // over both inbound x links (one when X = 2).
  const AxisLinks xl = LinksOf(mesh, b.x_axis);
  int64_t remote_rows = 0;
  for (int i = 0; i < b.x; ++i) {
    for (int j = 0; j < b.y; ++j)
      remote_rows = std::max(remote_rows, b.kk - Overlap(b, i, j).rows());
  }
  const double inbound = std::min(2, std::max(b.x - 1, 1));
  const double weights =
      static_cast<double>(remote_rows) * b.n * SizeOf(b.dtype) / (inbound * xl.link_bytes_per_s);
  // All-reduce over y of the f32 partial V_P = bm x N x 4 bytes: 2 x reduce-scatter.
  const AxisLinks yl = LinksOf(mesh, b.y_axis);
  const double v = static_cast<double>(b.bm) * b.n * SizeOf(DType::kF32);
  const double all_reduce = b.y > 1 ? std::max(2 * yl.hop_latency_s * (b.y - 1),
                                               2 * v / yl.link_bytes_per_s * (b.y - 1) / b.y)
                                    : 0.0;
  return {std::max({compute, weights, all_reduce}),
          "max(2 bm K_Y N passes / peak FLOP/s, missing weight rows x N / (x links in x W_oneway), "
          "max(2 T_min (Y-1), 2 (V_P/W_oneway)(Y-1)/Y)), V_P = f32 partial bm x N"};
}

double NoBusFactor(int) {
  return 1.0;
}

std::vector<Param> AgwParams() {
  return ParamList(
      AxisParam().Description("the axis X that shards the inputs' rows and the weights' K"),
      Axis2Param().Description("the axis Y that shards the inputs' K"),
      MParam().Description("M: rows of the inputs and of out"),
      KParam().Description("K: the contracting dim"),
      NParam().Description("N: columns of the weights and of out"),
      BnParam()
          .Description("the column chunk of N that one all-reduce step works on")
          .Auto("N/8, N/4 or N/2, the most chunks that keep an all-reduce block 128 lanes wide"),
      DTypeParam({DType::kBF16, DType::kF32, DType::kInt8, DType::kInt32}));
}

const Registration blocking(KernelInfo{
    "agw_matmul_ar",
    "all-gather the weights over x, multiply K-chunk y, then all-reduce over y (exposed)",
    AgwParams(), [](const Mesh& mesh, const Params& params) { return Make(mesh, params, false); },
    AgwBound, NoBusFactor, FlopsPerChip});
const Registration fused(KernelInfo{
    "agw_matmul_ar_fused",
    "push only the needed weight rows in column chunks; multiply while they move and "
    "all-reduce chunk c while multiplying chunk c+1",
    AgwParams(), [](const Mesh& mesh, const Params& params) { return Make(mesh, params, true); },
    AgwBound, NoBusFactor, FlopsPerChip});

}  // namespace

PallasCall AgwMatmulCall(const Mesh& mesh, const AgwMatmulProblem& problem, bool fused) {
  const AgwBlocks b = PlanAgwMatmul(mesh, problem);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any(), BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  // Streamed, A_ij's blocks are the k pipeline's own buffers, allocated while it runs.
  if (!b.streamed())
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({b.bm, b.kk}, b.dtype, "a_vmem"));
  // w_bufs: the rows of K-chunk j, one column chunk per parity.
  grid.scratch_shapes.push_back(ScratchSpec::VMEM({2, b.kk, b.nc}, b.dtype, "w_bufs"));
  for (ScratchSpec& s : AgwArRefs::Scratch(b))
    grid.scratch_shapes.push_back(std::move(s));
  grid.scratch_shapes.push_back(ScratchSpec::DMA({3}, "local_sems"));
  if (fused) {
    grid.scratch_shapes.push_back(ScratchSpec::DMA({2, b.x}, "w_send_sems"));
    grid.scratch_shapes.push_back(ScratchSpec::DMA({2, b.x}, "w_recv_sems"));
    grid.scratch_shapes.push_back(ScratchSpec::REGULAR({2}, "w_credit"));
  } else {
    // The gathered weights stay in HBM (Pallas's ANY scratch): all of W need not fit VMEM.
    grid.scratch_shapes.push_back(ScratchSpec::HBM({problem.k, b.n}, b.dtype, "w_full"));
    const int64_t gather_steps = std::max(b.x - 1, 1);
    grid.scratch_shapes.push_back(ScratchSpec::DMA({gather_steps}, "gather_send"));
    grid.scratch_shapes.push_back(ScratchSpec::DMA({gather_steps}, "gather_recv"));
  }
  PallasCall call =
      pallas_call(fused ? "agw_matmul_ar_fused" : "agw_matmul_ar", fused ? Fused(b) : Blocking(b),
                  grid, {{{b.bm, b.n}, b.out_dtype()}});
  call.in_names = {"inputs", "weights"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return call;
}

}  // namespace tpusim::kernels
