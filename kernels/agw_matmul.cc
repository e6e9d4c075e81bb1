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

#include <algorithm>
#include <optional>
#include <vector>

#include "base/errors.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/agw_matmul.h"
#include "kernels/registry.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

struct Blocks {
  std::string x_axis, y_axis;
  int x = 1, y = 1;
  int64_t bm = 0;  // rows per device: M / X
  int64_t kx = 0;  // rows of W per device: K / X
  int64_t kk = 0;  // columns of A per device, the K-chunk: K / Y
  int64_t n = 0;   // N
  int64_t c = 1;   // column chunks of N
  int64_t nc = 0;  // N / C
  int64_t nb = 0;  // an all-reduce block: nc / Y
  DType dtype = DType::kBF16;
};

// Partials are the MXU's accumulators: f32, or int32 for integers, whose products are
// int32 too.
DType AccOf(DType dtype) {
  return IsFloating(dtype) ? DType::kF32 : DType::kInt32;
}
DType OutOf(DType dtype) {
  return IsFloating(dtype) ? dtype : DType::kInt32;
}

uint64_t VmemBytes(const Blocks& b) {
  const uint64_t es = SizeOf(b.dtype), block = static_cast<uint64_t>(b.bm * b.nb);
  const uint64_t steps = static_cast<uint64_t>(std::max(2 * (b.y - 1), 1));
  return static_cast<uint64_t>(b.bm * b.kk + 2 * b.kk * b.nc) * es +
         2 * block * ((b.y + steps) * SizeOf(AccOf(b.dtype)) + b.y * SizeOf(OutOf(b.dtype)));
}

Blocks BlocksFor(const Mesh& mesh, const AgwMatmulProblem& problem) {
  Blocks b;
  b.x_axis = problem.x_axis;
  b.y_axis = problem.y_axis;
  if (b.y_axis.empty()) {
    for (const auto& name : mesh.axis_names()) {
      if (name != b.x_axis) {
        b.y_axis = name;
        break;
      }
    }
  }
  if (b.y_axis.empty() || b.y_axis == b.x_axis) {
    throw ParamError({"axis", "axis2"},
                     "agw_matmul needs a mesh with two axes, one sharding the weights' K (axis) "
                     "and another sharding the inputs' K (axis2, by default the first other "
                     "axis), and they must differ: a 1-D mesh has nowhere to put the second "
                     "sharding. Use a 2-D or 3-D slice such as v5e-2x2.");
  }
  b.x = mesh.AxisSize(b.x_axis);
  b.y = mesh.AxisSize(b.y_axis);
  const int64_t m = problem.m, k = problem.k, n = problem.n;
  if (m % b.x || k % b.x || k % b.y || n % b.y) {
    throw ParamError(
        {"m", "k", "n"},
        "inputs[" + std::to_string(m) + ", " + std::to_string(k) + "] x weights[" +
            std::to_string(k) + ", " + std::to_string(n) +
            "] does not shard evenly: m must be a multiple of X = " + std::to_string(b.x) +
            " (axis '" + b.x_axis + "'), k of both X and Y = " + std::to_string(b.y) + " (axis '" +
            b.y_axis + "'), and n of Y.");
  }
  b.bm = m / b.x;
  b.kx = k / b.x;
  b.kk = k / b.y;
  b.n = n;
  b.dtype = problem.dtype;
  if (problem.column_chunk > 0) {
    if (n % problem.column_chunk || problem.column_chunk % b.y) {
      throw ParamError({"bn"}, "bn " + std::to_string(problem.column_chunk) +
                                   " (the column chunk) must divide n (" + std::to_string(n) +
                                   ") and be a multiple of Y = " + std::to_string(b.y) + ".");
    }
    b.c = n / problem.column_chunk;
  } else {
    // As many chunks as keep an all-reduce block at least one 128-lane tile wide: more
    // chunks leave less of the last all-reduce exposed, each costs 2(Y-1) hop latencies.
    b.c = 1;
    for (int64_t c : {8, 4, 2}) {
      if (n % (c * b.y) == 0 && n / (c * b.y) >= 128) {
        b.c = c;
        break;
      }
    }
  }
  b.nc = n / b.c;
  b.nb = b.nc / b.y;
  // Everything below scales with the column chunk but A_ij: when the default chunks do
  // not fit in VMEM, take more, narrower ones (each all-reduce step then moves less).
  // Nothing else shares VMEM with these buffers: they may fill it, as they always could.
  const uint64_t budget = mesh.topology().chip().vmem().capacity_bytes();
  while (problem.column_chunk <= 0 && VmemBytes(b) > budget && n % (2 * b.c * b.y) == 0) {
    b.c *= 2;
    b.nc = n / b.c;
    b.nb = b.nc / b.y;
  }
  if (VmemBytes(b) > budget) {
    std::string message = "agw_matmul holds A_ij [" + std::to_string(b.bm) + ", " +
                          std::to_string(b.kk) + "] and, per column chunk of " +
                          std::to_string(b.nc);
    message += " (bn), two weight slots and the f32 all-reduce buffers in VMEM: " +
               std::to_string(VmemBytes(b)) + " bytes, more than the chip's budget of " +
               std::to_string(budget);
    message +=
        " bytes. Give a smaller bn that divides n and is a multiple of Y, shard m and k "
        "over more devices, or use a chip with more VMEM (chip.vmem.capacity_bytes).";
    throw ParamError({"m", "k", "n", "bn"}, message);
  }
  return b;
}

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

// The rows of K-chunk j that x-block `owner` holds, as [begin, end) of K (may be empty).
struct Piece {
  int owner;
  int64_t begin, end;
  int64_t rows() const { return end - begin; }
};
Piece Overlap(const Blocks& b, int owner, int j) {
  return Piece{owner, std::max(owner * b.kx, j * b.kk),
               std::min((owner + 1) * b.kx, (j + 1) * b.kk)};
}
// The pieces of K-chunk j, this device's own x-block first: those rows need no transfer.
std::vector<Piece> PiecesOf(const Blocks& b, int i, int j) {
  std::vector<Piece> pieces;
  for (int d = 0; d < b.x; ++d) {
    const int owner = (i + d) % b.x;
    const Piece p = Overlap(b, owner, j);
    if (p.rows() > 0) pieces.push_back(p);
  }
  return pieces;
}

// The refs one all-reduce over y uses, shared by both schedules; the f32 partial of a
// chunk is `Y` blocks [bm, nb], one per device of the y ring.
struct ArRefs {
  Ref partial;     // VMEM f32 [2, Y, bm, nb]: by chunk parity
  Ref recv;        // VMEM f32 [2, 2(Y-1), bm, nb]: one slot per step, by chunk parity
  Ref send_sems;   // DMA [2, 2(Y-1)]
  Ref recv_sems;   // DMA [2, 2(Y-1)]
  Ref credit;      // REGULAR [2]: the right neighbour's recv slots of a parity are free
  Ref out_vmem;    // VMEM dtype [2, Y, bm, nb]
  Ref store_sems;  // DMA [2, Y]
};

// Ring all-reduce of one chunk's partial over y: Y-1 reduce-scatter steps (add the
// arriving partial sum of a block, pass it on), then Y-1 all-gather steps (pass the
// reduced blocks on), 2 (V/W_oneway)(Y-1)/Y. Every step receives into its own slot, so
// within a chunk no slot is reused; across chunks the slots of a parity are reused two
// chunks later, after the receiver gave its left neighbour a credit. Start() sends the
// first block; each Advance() waits for one arrival and sends the next block, so a kernel
// may multiply between Advance() calls while the sends move.
class ChunkAllReduce {
 public:
  // Output stores outlive a chunk: out_vmem[parity] is reused two chunks later. The kernel
  // body owns them ([parity][block]) and drains them at the end.
  using Stores = std::vector<std::vector<std::optional<AsyncCopy>>>;

  ChunkAllReduce(Kernel& k, const Blocks& b, const ArRefs& refs, const Ref& out, int64_t chunk,
                 Stores& stores)
      : k_(k),
        b_(b),
        r_(refs),
        out_(out),
        chunk_(chunk),
        par_(static_cast<int>(chunk % 2)),
        stores_(stores) {
    const Ring ring = k.ring(b.y_axis);
    n_ = ring.size;
    me_ = ring.index;
    right_ = ring.index_at(1);
    left_ = ring.index_at(-1);
    steps_ = 2 * (n_ - 1);
  }

  void Start() {
    if (n_ == 1) return;
    // The right neighbour's slots of this parity held chunk - 2 until it finished it.
    if (chunk_ >= 2) k_.wait(r_.credit.at(par_), 1);
    Send(0, Block(me_));
  }
  bool Pending() const { return next_ < steps_; }
  void Advance() {
    const int t = next_++;
    auto scope =
        k_.named_scope("all-reduce chunk " + std::to_string(chunk_) + " step " + std::to_string(t));
    // Our own descriptor of the same size: the left neighbour's step t send lands here.
    AsyncCopy incoming = k_.async_remote_copy(Recv(t), Recv(t), r_.send_sems.at(par_, t),
                                              r_.recv_sems.at(par_, t), {{b_.y_axis, left_}});
    incoming.wait_recv();
    if (t < n_ - 1) {
      // Reduce-scatter: the partial sum of block me-1-t arrived; add ours.
      const Ref sum = Block(Mod(me_ - 1 - t));
      k_.add(sum, sum, Recv(t));
      // Pass it on; after the last add it is fully reduced (block me+1) and starts the
      // all-gather.
      Send(t + 1, sum);
    } else if (t + 1 < steps_) {
      Send(t + 1, Recv(t));  // all-gather: pass the reduced block on
    }
  }
  // Casts the reduced blocks to the output dtype and stores them; waits for every send.
  void Finish(bool more_chunks_reuse_slots) {
    while (Pending())
      Advance();
    for (int u = 0; u < n_; ++u) {
      const int block = Mod(me_ + 1 - u);  // reduced here (u = 0) or arrived at AG step u-1
      const Ref reduced = u == 0 ? Block(block) : Recv(n_ - 1 + u - 1);
      if (stores_[par_][block]) stores_[par_][block]->wait();
      stores_[par_][block].reset();
      const Ref staged = r_.out_vmem.at(par_, block);
      k_.cast(staged, reduced);
      AsyncCopy store =
          k_.async_copy(staged, out_.at(ds(0, b_.bm), ds(chunk_ * b_.nc + block * b_.nb, b_.nb)),
                        r_.store_sems.at(par_, block));
      store.start();
      stores_[par_][block] = store;
    }
    for (auto& send : sends_)
      send.wait_send();
    sends_.clear();
    // Our slots of this parity are read: the left neighbour may fill them with chunk + 2.
    if (n_ > 1 && more_chunks_reuse_slots) k_.signal(r_.credit.at(par_), 1, {{b_.y_axis, left_}});
  }
  static Stores NoStores(int y) { return Stores(2, std::vector<std::optional<AsyncCopy>>(y)); }
  static void Drain(Stores& stores) {
    for (auto& parity : stores) {
      for (auto& store : parity) {
        if (store) store->wait();
        store.reset();
      }
    }
  }

 private:
  int Mod(int v) const { return (v % n_ + n_) % n_; }
  Ref Block(int block) const { return r_.partial.at(par_, block); }
  Ref Recv(int t) const { return r_.recv.at(par_, t); }
  void Send(int t, const Ref& src) {
    AsyncCopy send = k_.async_remote_copy(src, Recv(t), r_.send_sems.at(par_, t),
                                          r_.recv_sems.at(par_, t), {{b_.y_axis, right_}});
    send.start();
    sends_.push_back(send);
  }

  Kernel& k_;
  Blocks b_;
  ArRefs r_;
  Ref out_;
  int64_t chunk_;
  int par_;
  int n_ = 1, me_ = 0, right_ = 0, left_ = 0, steps_ = 0, next_ = 0;
  Stores& stores_;
  std::vector<AsyncCopy> sends_;
};

// Refs: a (HBM [bm, kk]), w (HBM [kx, N]), out (HBM [bm, N]), then the scratch Make lists:
// a_vmem, w_bufs (VMEM [2, kk, nc]: the rows of K-chunk j, one column chunk per parity),
// the all-reduce's seven, local_sems DMA[3], then three per schedule.
constexpr int kFirstScratch = 3;
ArRefs ArRefsOf(const Refs& r) {
  return ArRefs{r[kFirstScratch + 2], r[kFirstScratch + 3], r[kFirstScratch + 4],
                r[kFirstScratch + 5], r[kFirstScratch + 6], r[kFirstScratch + 7],
                r[kFirstScratch + 8]};
}

// Nobody may DMA into or signal a device that has not entered the kernel: meet every
// device of our x-column (weights move between any two of them) and both y neighbours.
void Barrier(Kernel& k, const Blocks& b) {
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

KernelFn Blocking(Blocks b) {
  return [b](Kernel& k, const Refs& r) {
    const Ref &a = r[0], &w = r[1], &out = r[2];
    const Ref &a_vmem = r[3], &w_bufs = r[4], &local_sems = r[12];
    const Ref &w_full = r[13], &gather_send = r[14], &gather_recv = r[15];
    const ArRefs ar = ArRefsOf(r);
    const int i = k.axis_index(b.x_axis), j = k.axis_index(b.y_axis);
    AsyncCopy load_a = k.async_copy(a, a_vmem, local_sems.at(2));
    load_a.start();
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
    load_a.wait();
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
        for (int blk = 0; blk < b.y; ++blk) {
          k.dot(a_vmem, w_bufs.at(par, ds(0, b.kk), ds(blk * b.nb, b.nb)), ar.partial.at(par, blk),
                /*accumulate=*/false);
        }
      }
      ChunkAllReduce reduce(k, b, ar, out, c, stores);
      reduce.Start();
      reduce.Finish(c + 2 < b.c);
    }
    ChunkAllReduce::Drain(stores);
  };
}

KernelFn Fused(Blocks b) {
  return [b](Kernel& k, const Refs& r) {
    const Ref &a = r[0], &w = r[1], &out = r[2];
    const Ref &a_vmem = r[3], &w_bufs = r[4], &local_sems = r[12];
    const Ref &w_send_sems = r[13], &w_recv_sems = r[14], &w_credit = r[15];
    const ArRefs ar = ArRefsOf(r);
    const int i = k.axis_index(b.x_axis), j = k.axis_index(b.y_axis);
    const std::vector<Piece> pieces = PiecesOf(b, i, j);
    // As an owner: the rows of K-chunk j we hold go to every other device of the column.
    const Piece mine = Overlap(b, i, j);
    const int targets = mine.rows() > 0 ? b.x - 1 : 0;
    auto w_slot = [&](int64_t c, const Piece& p) {
      return w_bufs.at(c % 2, ds(p.begin - j * b.kk, p.rows()));
    };
    auto w_source = [&](int64_t c, const Piece& p) {
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

    AsyncCopy load_a = k.async_copy(a, a_vmem, local_sems.at(2));
    load_a.start();
    load_local(0);
    Barrier(k, b);
    push(0);
    load_a.wait();
    auto stores = ChunkAllReduce::NoStores(b.y);
    std::optional<ChunkAllReduce> previous;
    for (int64_t c = 0; c < b.c; ++c) {
      const int par = static_cast<int>(c % 2);
      if (c + 1 < b.c) {
        push(c + 1);
        load_local(c + 1);
      }
      {
        auto scope = k.named_scope("matmul chunk " + std::to_string(c));
        for (size_t p = 0; p < pieces.size(); ++p) {
          const Piece& piece = pieces[p];
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
          const Ref a_cols = a_vmem.at(ds(0, b.bm), ds(piece.begin - j * b.kk, piece.rows()));
          for (int blk = 0; blk < b.y; ++blk) {
            k.dot(a_cols, w_slot(c, piece).at(ds(0, piece.rows()), ds(blk * b.nb, b.nb)),
                  ar.partial.at(par, blk), /*accumulate=*/p > 0);
            // The previous chunk's all-reduce moves while the MXU works.
            if (previous && previous->Pending()) previous->Advance();
          }
        }
      }
      // Our weight slots of this parity are read: their owners may push chunk c + 2.
      if (c + 2 < b.c) {
        for (const Piece& piece : pieces) {
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
  const Blocks b = BlocksFor(mesh, problem);
  const P in_spec{b.x_axis, b.y_axis};
  const P w_spec{b.x_axis, nullptr};
  const P out_spec{b.x_axis, nullptr};
  Workload wl{
      shard_map(mesh, {in_spec, w_spec}, {out_spec}, AgwMatmulCall(mesh, problem, fused)), {}, {}};
  AddMatmulOperands(wl, MatmulProblemOf(params));
  return wl;
}

double FlopsPerChip(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, ProblemOf(params));
  return 2.0 * b.bm * b.kk * b.n;
}

Bound AgwBound(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, ProblemOf(params));
  const double compute = FlopsPerChip(mesh, params) / PeakMxuFlops(mesh);
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
          "max(2 bm K_Y N / peak FLOP/s, missing weight rows x N / (x links in x W_oneway), "
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
  const Blocks b = BlocksFor(mesh, problem);
  const int64_t steps = std::max(2 * (b.y - 1), 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any(), BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {
      ScratchSpec::VMEM({b.bm, b.kk}, b.dtype, "a_vmem"),
      ScratchSpec::VMEM({2, b.kk, b.nc}, b.dtype, "w_bufs"),
      ScratchSpec::VMEM({2, b.y, b.bm, b.nb}, AccOf(b.dtype), "partial"),
      ScratchSpec::VMEM({2, steps, b.bm, b.nb}, AccOf(b.dtype), "ar_recv"),
      ScratchSpec::DMA({2, steps}, "ar_send_sems"),
      ScratchSpec::DMA({2, steps}, "ar_recv_sems"),
      ScratchSpec::REGULAR({2}, "ar_credit"),
      ScratchSpec::VMEM({2, b.y, b.bm, b.nb}, OutOf(b.dtype), "out_vmem"),
      ScratchSpec::DMA({2, b.y}, "store_sems"),
      ScratchSpec::DMA({3}, "local_sems"),
  };
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
                  grid, {{{b.bm, b.n}, OutOf(b.dtype)}});
  call.in_names = {"inputs", "weights"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return call;
}

}  // namespace tpusim::kernels
