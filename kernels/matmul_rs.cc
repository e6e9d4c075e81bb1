// Reduce-scatter matmul, Tmp[B_X, F_Y] x W2[F_Y, D] -> Out[B_X, D_Y] (docs/references.md §4):
// the contracting dim F is sharded over the ring axis Y, so each device can only form a
// partial product of its rows, and the Y partials must be summed and scattered over D.
// Two schedules compute the same thing:
//   matmul_rs_blocking:   the whole local partial Tmp_local @ W2_local -> [B/X, D] in f32,
//                         then a ring reduce-scatter over Y on D. The reduction is exposed.
//   matmul_rs_collective: Y steps; at step s compute only the partial of the D-chunk that
//                         is sent at step s (the chunk destined for device me + s + 1
//                         reaches it after Y-1-s hops), add the partial sum arriving from
//                         the left and pass it right; the last step's chunk is our own.
//                         The transfer of step s hides behind the matmul of step s + 1.
// Partial sums travel in f32: they are the MXU's f32 accumulators, and rounding them to
// bf16 at every hop would add Y-1 roundings of values far larger than many of the final
// elements. It costs 2x the bytes of a bf16 reduction; the bound counts those bytes.
// Integer partial sums travel in int32, wrapping as the exact product does.

#include <algorithm>
#include <optional>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/chunk_matmul.h"
#include "kernels/matmul.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

constexpr RingMatmulNames kNames = {"the reduce-scatter matmul", "Tmp", "W2", "F", "D"};

// The problem as each device sees it.
struct Blocks {
  std::string ring;                 // the axis F and D are sharded over (Y)
  std::vector<std::string> others;  // the axes B is sharded over (X)
  int y = 1;
  int64_t bm = 0;  // rows of Tmp and Out per device: B / X
  int64_t fk = 0;  // F-chunk per device: F / Y
  int64_t d = 0;   // D
  int64_t dn = 0;  // D-chunk of Out per device: D / Y
  DType dtype = DType::kBF16;
  // Streamed: Tmp, W2, the partial sums and the receive slots stay in HBM and every
  // multiply, add and cast streams through VMEM in plan's blocks (kernels/chunk_matmul.h);
  // else (when they fit) Tmp and the sums live in VMEM and W2's D-chunks are
  // double-buffered.
  bool streamed = false;
  ChunkMatmulPlan plan;
};

Blocks BlocksFor(const Mesh& mesh, const Params& params) {
  const MatmulProblem problem = MatmulProblemOf(params);
  const RingMatmulShards s = ShardRingMatmul(mesh, params.String("axis"), problem, kNames);
  return {s.ring, s.others, s.y, s.rows, s.k_chunk, problem.n, s.n_chunk, problem.dtype, false, {}};
}

// Refs: tmp (HBM [bm, fk]), w2 (HBM [fk, D]), out (HBM [bm, dn]), then the scratch Make
// lists: sums (the accumulator dtype: the whole partial [Y, bm, dn] for the blocking
// schedule, two step slots [2, bm, dn] for the collective one), recv [2, bm, dn], the
// semaphores, and either tmp_vmem, w_bufs (VMEM [2, fk, dn]: W2's D-chunks,
// double-buffered) and out_vmem, or, streamed, cm_acc (sums and recv then in HBM).
//
// The ring both schedules share. A sender writes the right neighbour's recv[s % 2]; that
// slot held the neighbour's step s-2 arrival until it was added, so from step 2 on the
// sender first takes a credit the neighbour gives back after that add (the capacity
// hazard of docs/references.md §5). Only the first two fills are free.
KernelFn RsKernel(Blocks b, bool collective) {
  return [b, collective](Kernel& k, const Refs&) {
    const Ring ring = k.ring(b.ring);
    const int n = ring.size;
    const DeviceId right = ring.right_device(), left = ring.left_device();
    const Ref &tmp = k.ref("tmp"), &w2 = k.ref("w2"), &out = k.ref("out");
    const Ref &sums = k.ref(collective ? "sums" : "partial"), &recv = k.ref("recv");
    const Ref &local_sems = k.ref("local_sems"), &send_sems = k.ref("send_sems"),
              &recv_sems = k.ref("recv_sems"), &credit = k.ref("credit");
    // Streamed, Tmp and W2 are read where they are; else Tmp comes into VMEM whole and
    // W2's D-chunks through two slots.
    const Ref tmp_vmem = b.streamed ? tmp : k.ref("tmp_vmem");
    const Ref w_bufs = b.streamed ? w2 : k.ref("w_bufs");
    const Ref out_vmem = b.streamed ? out : k.ref("out_vmem");
    auto w_chunk = [&](int chunk) { return w2.at(ds(0, b.fk), ds(chunk * b.dn, b.dn)); };
    auto load_w = [&](int chunk, int slot) {
      return k.async_copy(w_chunk(chunk), w_bufs.at(slot), local_sems.at(slot));
    };
    // Where step s's partial sum lives: one slot per chunk (blocking), or per step parity.
    // The D-chunk whose partial sum this device sends at ring step s (received at step s + 1
    // by the right neighbour, which adds its own partial of the same chunk). At s = Y-1 it
    // is the device's own chunk: Y-1 hops have summed every other device's partial into it.
    auto chunk_at = [&](int s) { return ring.index_at(-s - 1); };
    auto sum_at = [&](int s) { return collective ? sums.at(s % 2) : sums.at(chunk_at(s)); };

    // Blocking computes chunks in index order; collective in the order the ring sends them.
    auto chunk_of = [&](int j) { return collective ? chunk_at(j) : j; };
    std::optional<AsyncCopy> load_tmp, next_w;
    if (!b.streamed) {
      load_tmp = k.async_copy(tmp, tmp_vmem, local_sems.at(2));
      load_tmp->start();
      next_w = load_w(chunk_of(0), 0);
      next_w->start();
    }
    MeetRingNeighbours(k, b.ring);
    if (load_tmp) load_tmp->wait();
    // Streams W2's chunk j + 1 while chunk j is multiplied into `into`.
    auto multiply = [&](int j, const Ref& into) {
      if (b.streamed) {
        StreamMatmul(k, b.plan, tmp, w_chunk(chunk_of(j)), std::nullopt, into);
        return;
      }
      AsyncCopy current = *next_w;
      if (j + 1 < n) {
        next_w = load_w(chunk_of(j + 1), (j + 1) % 2);
        next_w->start();
      }
      current.wait();
      k.dot(tmp_vmem, w_bufs.at(j % 2), into, /*accumulate=*/false);
    };
    if (!collective) {
      auto scope = k.named_scope("matmul");
      for (int j = 0; j < n; ++j)
        multiply(j, sums.at(j));
    }

    std::vector<std::optional<AsyncCopy>> sends(2);
    for (int s = 0; s < n; ++s) {
      auto scope =
          k.named_scope((collective ? "step " : "reduce-scatter step ") + std::to_string(s));
      const Ref sum = sum_at(s);
      if (collective) {
        // The slot was the source of step s-2's send: its bytes must have left.
        if (sends[s % 2]) sends[s % 2]->wait_send();
        sends[s % 2].reset();
        multiply(s, sum);
      }
      if (s > 0) {
        // Our own descriptor of the same size: the left neighbour's step s-1 send lands
        // on our recv_sems[(s-1) % 2].
        AsyncCopy incoming = k.async_remote_copy(
            sum, recv.at((s - 1) % 2), send_sems.at((s - 1) % 2), recv_sems.at((s - 1) % 2), left);
        incoming.wait_recv();
        if (b.streamed) {
          StreamElementwise(k, b.plan, sum, sum, recv.at((s - 1) % 2));
        } else {
          k.add(sum, sum, recv.at((s - 1) % 2));
        }
        // recv[(s-1) % 2] is free: the left neighbour refills it at its step s + 1, if any.
        if (s + 1 <= n - 2) k.signal(credit, 1, left);
      }
      if (s < n - 1) {
        if (s >= 2) k.wait(credit, 1);
        AsyncCopy send = k.async_remote_copy(sum, recv.at(s % 2), send_sems.at(s % 2),
                                             recv_sems.at(s % 2), right);
        send.start();
        if (collective) {
          sends[s % 2] = send;  // waited for two steps on, or at the end
        } else {
          send.wait_send();  // a plain ring: one step at a time
        }
      } else if (b.streamed) {
        StreamElementwise(k, b.plan, out, sum);  // our own chunk, complete
      } else {
        k.cast(out_vmem, sum);
      }
    }
    for (auto& send : sends) {
      if (send) send->wait_send();
    }
    if (!b.streamed) {
      AsyncCopy store = k.async_copy(out_vmem, out, local_sems.at(2));
      store.start();
      store.wait();
    }
  };
}

Workload Make(const Mesh& mesh, const Params& params, bool collective) {
  Blocks b = BlocksFor(mesh, params);
  const char* name = collective ? "matmul_rs_collective" : "matmul_rs_blocking";
  // Partial sums are the MXU's accumulators: f32, or int32 for integers.
  const DType acc = !IsFloating(b.dtype) ? DType::kInt32 : DType::kF32;
  const DType out_dtype = !IsFloating(b.dtype) ? DType::kInt32 : b.dtype;
  const int64_t sum_slots = collective ? 2 : b.y;
  const uint64_t chunk = static_cast<uint64_t>(b.bm * b.dn);
  const uint64_t vmem_bytes =
      static_cast<uint64_t>(b.bm * b.fk + 2 * b.fk * b.dn) * SizeOf(b.dtype) +
      chunk * ((sum_slots + 2) * SizeOf(acc) + SizeOf(out_dtype));
  const uint64_t budget = VmemBudget(mesh);
  b.streamed = vmem_bytes > budget;
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any(), BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  auto sums_scratch = [&](Shape shape, const char* scratch_name) {
    return b.streamed ? ScratchSpec::HBM(std::move(shape), acc, scratch_name)
                      : ScratchSpec::VMEM(std::move(shape), acc, scratch_name);
  };
  grid.scratch_shapes = {
      sums_scratch({sum_slots, b.bm, b.dn}, collective ? "sums" : "partial"),
      sums_scratch({2, b.bm, b.dn}, "recv"),
      ScratchSpec::DMA({3}, "local_sems"),
      ScratchSpec::DMA({2}, "send_sems"),
      ScratchSpec::DMA({2}, "recv_sems"),
      ScratchSpec::REGULAR({}, "credit"),
  };
  if (b.streamed) {
    b.plan = PlanStreamedChunkMatmul(name, b.bm, b.fk, b.dn, b.dtype, budget);
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({b.plan.tm, b.plan.tn}, acc, "cm_acc"));
  } else {
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({b.bm, b.fk}, b.dtype, "tmp_vmem"));
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({2, b.fk, b.dn}, b.dtype, "w_bufs"));
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({b.bm, b.dn}, out_dtype, "out_vmem"));
  }
  PallasCall call = pallas_call(name, RsKernel(b, collective), grid, {{{b.bm, b.dn}, out_dtype}});
  call.in_names = {"tmp", "w2"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  const P row_spec{PartitionSpec::Entry(b.others), b.ring};
  const P w_spec{b.ring, nullptr};
  Workload w{shard_map(mesh, {row_spec, w_spec}, {row_spec}, call), {}, {}};
  AddMatmulOperands(w, MatmulProblemOf(params));
  return w;
}

double FlopsPerChip(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, params);
  return 2.0 * b.bm * b.fk * b.d;
}

Bound MatmulRsBound(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, params);
  const double compute = MxuPeakSeconds(mesh, FlopsPerChip(mesh, params), b.dtype);
  const AxisLinks links = LinksOf(mesh, b.ring);
  // A one-way ring reduce-scatter of the f32 partial, V_P = bm x D x 4 bytes.
  const double v = static_cast<double>(b.bm) * b.d * SizeOf(DType::kF32);
  const double comm =
      std::max(links.hop_latency_s * (b.y - 1), v / links.link_bytes_per_s * (b.y - 1) / b.y);
  return {
      std::max(compute, comm),
      "max(2 bm F_Y D passes / peak FLOP/s, max(T_min (Y-1), (V_P/W_oneway)(Y-1)/Y)), V_P = f32 "
      "partial bm x D"};
}

double NoBusFactor(int) {
  return 1.0;
}

const Registration blocking(KernelInfo{
    "matmul_rs_blocking",
    "local matmul to an f32 partial, then a ring reduce-scatter over the ring axis (exposed)",
    RingMatmulParams(kNames, {DType::kBF16, DType::kF32, DType::kInt8, DType::kInt32}),
    [](const Mesh& mesh, const Params& params) { return Make(mesh, params, false); }, MatmulRsBound,
    NoBusFactor, FlopsPerChip});
const Registration collective(KernelInfo{
    "matmul_rs_collective",
    "collective matmul: compute the D-chunk the ring sends next while the last one moves",
    RingMatmulParams(kNames, {DType::kBF16, DType::kF32, DType::kInt8, DType::kInt32}),
    [](const Mesh& mesh, const Params& params) { return Make(mesh, params, true); }, MatmulRsBound,
    NoBusFactor, FlopsPerChip});

}  // namespace
}  // namespace tpusim::kernels
