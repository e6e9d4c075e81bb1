// All-gather matmul, A[B_X, D_Y] x W[D, F_Y] -> Out[B_X, F_Y] (docs/references.md §4): the
// contracting dim D of A is sharded over the ring axis Y, so each device must see every
// D-chunk of its rows of A. Two schedules compute the same thing:
//   ag_matmul_blocking:   all-gather A over Y (into VMEM when it fits, else HBM), then one
//                         matmul. The gather is fully exposed.
//   ag_matmul_collective: Y steps; at each, multiply the chunk already held while the next
//                         chunk moves to the neighbour (Wang et al., ASPLOS 2023), so the
//                         transfer hides behind the MXU when compute per step >= transfer.
//   ag_matmul_collective_bidi: the same with chunks travelling both ways round the ring, so
//                         both link directions carry data and there are ~Y/2 steps instead
//                         of Y-1, each multiplying two chunks while the next two move.

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

constexpr RingMatmulNames kNames = {"the all-gather matmul", "A", "W", "D", "F"};
// Every dtype the MXU's dots take, as `matmul` does: int8 and int32 give int32.
const std::vector<DType> kAllDTypes = {DType::kBF16, DType::kF32, DType::kInt8, DType::kInt32};

// The problem as each device sees it.
struct Blocks {
  std::string ring;                 // the axis D and F are sharded over (Y)
  std::vector<std::string> others;  // the axes B is sharded over (X)
  int y = 1;
  int64_t bm = 0;  // rows of A per device: B / X
  int64_t dk = 0;  // D-chunk per device: D / Y
  int64_t d = 0;   // D
  int64_t fn = 0;  // columns of W and Out per device: F / Y
  DType dtype = DType::kBF16;
  ChunkMatmulPlan plan;    // how each multiply streams through VMEM
  bool a_in_vmem = false;  // A's chunk buffers: in VMEM, or in HBM
};

Blocks BlocksFor(const Mesh& mesh, const Params& params) {
  const MatmulProblem problem = MatmulProblemOf(params);
  const RingMatmulShards s = ShardRingMatmul(mesh, params.String("axis"), problem, kNames);
  return {s.ring, s.others, s.y, s.rows, s.k_chunk, problem.k, s.n_chunk, problem.dtype, {}, false};
}

// Refs: a (HBM [bm, dk]), w (HBM [d, fn]), out (HBM [bm, fn]), then the scratch Make
// lists. A's chunks move HBM to HBM; every multiply streams its operands through VMEM in
// blocks (kernels/chunk_matmul.h), so only the blocks in flight occupy VMEM.
KernelFn Blocking(Blocks b) {
  return [b](Kernel& k, const Refs&) {
    const Ref &a = k.ref("a"), &w = k.ref("w"), &out = k.ref("out");
    const Ref &a_full = k.ref("a_full"), &local_sems = k.ref("local_sems"),
              &send_sems = k.ref("send_sems"), &recv_sems = k.ref("recv_sems");
    const Ring ring = k.ring(b.ring);
    const int n = ring.size;
    const int me = ring.index;
    const DeviceId right = ring.right_device();
    auto chunk = [&](int j) { return a_full.at(ds(0, b.bm), ds(j * b.dk, b.dk)); };

    AsyncCopy load_a = k.async_copy(a, chunk(me), local_sems.at(0));
    load_a.start();
    load_a.wait();
    if (n > 1) {
      auto scope = k.named_scope("all-gather A");
      MeetRingNeighbours(k, b.ring);
      for (int step = 0; step < n - 1; ++step) {
        const int held = ring.index_at(-step);
        AsyncCopy copy = k.async_remote_copy(chunk(held), chunk(held), send_sems.at(step),
                                             recv_sems.at(step), right);
        copy.start();
        copy.wait_send();
        copy.wait_recv();
      }
    }
    auto scope = k.named_scope("matmul");
    ChunkProduct(k, b.plan).Add(a_full, w, /*last=*/true, out);
  };
}

KernelFn Collective(Blocks b) {
  return [b](Kernel& k, const Refs&) {
    const Ref &a = k.ref("a"), &w = k.ref("w"), &out = k.ref("out");
    const Ref& a_bufs = k.ref("a_bufs");
    const Ref &send_sems = k.ref("send_sems"), &recv_sems = k.ref("recv_sems"),
              &free_slots = k.ref("free_slots");
    const Ring ring = k.ring(b.ring);
    const int n = ring.size;
    const DeviceId right = ring.right_device(), left = ring.left_device();
    // Step 0 multiplies and forwards our own chunk where it lies; later chunks arrive in
    // two HBM slots by step parity.
    // With A's slots in VMEM, our chunk is loaded into slot 0 as the MXU reads it best.
    auto buf = [&](int step) { return step == 0 && !b.a_in_vmem ? a : a_bufs.at(step % 2); };
    // At step s this device holds the D-chunk that started on device me - s.
    auto held = [&](int step) { return ring.index_at(-step); };
    ChunkProduct product(k, b.plan);

    std::optional<AsyncCopy> load_a;
    if (b.a_in_vmem) {
      load_a = k.async_copy(a, buf(0), k.ref("local_sems").at(0));
      load_a->start();
    }
    MeetRingNeighbours(k, b.ring);
    if (load_a) load_a->wait();
    for (int step = 0; step < n; ++step) {
      auto scope = k.named_scope("step " + std::to_string(step));
      const bool forward = step < n - 1;
      AsyncCopy pass = k.async_remote_copy(buf(step), a_bufs.at((step + 1) % 2),
                                           send_sems.at(step % 2), recv_sems.at(step % 2), right);
      if (forward) {
        // The right neighbour's slot (step + 1) % 2 held its previous chunk until it said it
        // was done with it; overwriting it sooner is the hazard docs/references.md §5 names.
        if (step > 0) k.wait(free_slots, 1);
        pass.start();
      }
      auto w_rows = [&](int s) { return w.at(ds(held(s) * b.dk, b.dk), ds(0, b.fn)); };
      std::optional<Ref> next_w;
      if (forward) next_w = w_rows(step + 1);
      product.Add(buf(step), w_rows(step), /*last=*/!forward, out, next_w);
      // buf(step) is free once the MXU has read it and our forward of it has left: then
      // the left neighbour may refill it. Saying so before waiting for our own receive
      // keeps the ring from serialising.
      if (forward) pass.wait_send();
      if (step + 2 <= n - 1) k.signal(free_slots, 1, left);
      if (forward) {
        pass.wait_recv();  // the next chunk, from the left
        product.Prefetch(buf(step + 1));
      }
    }
  };
}

// Bidirectional collective matmul. Every device sends its own chunk both ways; the
// rightward stream then forwards the chunks that started at me-1, me-2, ... and the
// leftward one those from me+1, me+2, .... After S = floor(Y/2) steps every chunk has
// arrived. On an odd ring the two streams meet exactly: (Y-1)/2 whole chunks each. On an
// even ring the chunk opposite (me + Y/2) would arrive twice, so its last hop is split by
// columns of D: the rightward stream carries its first half and the leftward one its
// second, and both directions stay equally loaded (Y = 2: the halves of the one other
// chunk). Step s multiplies the two parts that arrived at step s-1 (the own chunk at step
// 0) while the next two parts are on the wire.
KernelFn CollectiveBidi(Blocks b) {
  return [b](Kernel& k, const Refs&) {
    const Ref &a = k.ref("a"), &w = k.ref("w"), &out = k.ref("out");
    // a: this device's chunk; a_bufs[dir][parity]: the two streams, double-buffered in HBM.
    const Ref& a_bufs = k.ref("a_bufs");
    const Ref &send_sems = k.ref("send_sems"), &recv_sems = k.ref("recv_sems"),
              &free_slots = k.ref("free_slots");
    constexpr int kRight = 0, kLeft = 1;
    const Ring ring = k.ring(b.ring);
    const int n = ring.size;
    const int me = ring.index;
    const DeviceId right = ring.right_device(), left = ring.left_device();
    const int last = n / 2;  // S: the last step; sends happen at steps 0 .. S-1
    const bool split_last = n % 2 == 0;
    const int64_t half = b.dk / 2;
    struct Part {
      int chunk;
      int64_t col, cols;  // the columns of the chunk (a range of D) this part covers
    };
    // The part stream `dir` holds at step s >= 1.
    auto part = [&](int dir, int s) {
      const int chunk = dir == kRight ? ring.index_at(-s) : ring.index_at(s);
      if (split_last && s == last) {
        return dir == kRight ? Part{chunk, 0, half} : Part{chunk, half, b.dk - half};
      }
      return Part{chunk, 0, b.dk};
    };
    const Ref own = b.a_in_vmem ? k.ref("own") : a;
    auto held = [&](int dir, int s) { return s == 0 ? own : a_bufs.at(dir, s % 2); };
    auto cols = [](const Ref& chunk, const Part& p) {
      return chunk.at(ds(0, chunk.shape()[0]), ds(p.col, p.cols));
    };
    ChunkProduct product(k, b.plan);

    std::optional<AsyncCopy> load_a;
    if (b.a_in_vmem) {
      load_a = k.async_copy(a, own, k.ref("local_sems").at(0));
      load_a->start();
    }
    MeetRingNeighbours(k, b.ring);
    if (load_a) load_a->wait();
    for (int s = 0; s <= last; ++s) {
      auto scope = k.named_scope("step " + std::to_string(s));
      std::vector<AsyncCopy> passes;
      if (s < last) {
        for (int dir : {kRight, kLeft}) {
          const Part p = part(dir, s + 1);
          // The neighbour's slot a_bufs[dir][(s+1) % 2] held its step s-1 part until it said
          // it was done with it (its own multiply and forward); only the first fill is free.
          if (s >= 2) k.wait(free_slots.at(dir), 1);
          passes.push_back(k.async_remote_copy(
              cols(held(dir, s), p), cols(a_bufs.at(dir, (s + 1) % 2), p), send_sems.at(dir, s % 2),
              recv_sems.at(dir, s % 2), dir == kRight ? right : left));
          passes.back().start();
        }
      }
      const int parts = s == 0 ? 1 : 2;
      auto part_at = [&](int dir, int step) {
        return step == 0 ? Part{me, 0, b.dk} : part(dir, step);
      };
      auto w_rows = [&](const Part& p) {
        return w.at(ds(p.chunk * b.dk + p.col, p.cols), ds(0, b.fn));
      };
      for (int dir = 0; dir < parts; ++dir) {
        const Part p = part_at(dir, s);
        // The next pass: this step's other part (already here), or the next step's first
        // (its rows of W now, its part of A when it arrives).
        std::optional<Ref> next_w, next_a;
        if (dir + 1 < parts) {
          next_w = w_rows(part_at(dir + 1, s));
          next_a = cols(held(dir + 1, s), part_at(dir + 1, s));
        } else if (s < last) {
          next_w = w_rows(part_at(kRight, s + 1));
        }
        product.Add(cols(held(dir, s), p), w_rows(p), /*last=*/s == last && dir == parts - 1, out,
                    next_w, next_a);
      }
      for (AsyncCopy& pass : passes)
        pass.wait_send();
      // Both slots of step s are multiplied and forwarded: each sender may refill its slot,
      // if it will send again (at step s+1, landing at s+2 <= S).
      if (s >= 1 && s + 2 <= last) {
        k.signal(free_slots.at(kRight), 1, left);
        k.signal(free_slots.at(kLeft), 1, right);
      }
      for (AsyncCopy& pass : passes)
        pass.wait_recv();  // the next parts, one from each side
      if (s < last) product.Prefetch(cols(held(kRight, s + 1), part_at(kRight, s + 1)));
    }
  };
}

enum class Schedule { kBlocking, kCollective, kBidi };

const char* KernelName(Schedule schedule) {
  switch (schedule) {
    case Schedule::kBlocking:
      return "ag_matmul_blocking";
    case Schedule::kCollective:
      return "ag_matmul_collective";
    case Schedule::kBidi:
      break;
  }
  return "ag_matmul_collective_bidi";
}

Workload Make(const Mesh& mesh, const Params& params, Schedule schedule) {
  Blocks b = BlocksFor(mesh, params);
  const int64_t steps = std::max(b.y - 1, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any(), BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  KernelFn kernel;
  // Every pass's k must be a whole number of k blocks: the bidirectional schedule's
  // halves of a chunk on an even ring are the smallest.
  int64_t k_quantum = b.dk;
  if (schedule == Schedule::kBlocking) k_quantum = b.d;
  if (schedule == Schedule::kBidi && b.y % 2 == 0 && b.dk % 256 == 0) k_quantum = b.dk / 2;
  // A's chunks stay in VMEM, where the dots read them in place, when they fit beside a
  // resident product; else they live in HBM and are streamed like W.
  const int64_t a_elements =
      static_cast<int64_t>(b.bm) * (schedule == Schedule::kBlocking     ? b.d
                                    : schedule == Schedule::kCollective ? 2 * b.dk
                                                                        : 5 * b.dk);
  const uint64_t a_bytes = static_cast<uint64_t>(a_elements) * SizeOf(b.dtype);
  const uint64_t budget = VmemBudget(mesh);
  const std::string kernel_name = KernelName(schedule);
  std::optional<ChunkMatmulPlan> beside_a;
  if (a_bytes < budget) {
    // A step that mostly waits on the ring (its chunk's transfer is several times its
    // dots) gains nothing
    // from short k blocks and loses the tail of the last W chunk to them.
    const AxisLinks links = LinksOf(mesh, b.ring);
    const double dots = 2.0 * b.bm * b.dk * b.fn / PeakMxuFlops(mesh);
    const double transfer =
        static_cast<double>(b.bm) * b.dk * SizeOf(b.dtype) / links.link_bytes_per_s;
    const bool waits_on_ring = schedule != Schedule::kBlocking && transfer > 4 * dots;
    beside_a = PlanResidentChunkMatmul(b.bm, k_quantum, b.fn, b.dtype, budget - a_bytes,
                                       /*a_in_vmem=*/true, waits_on_ring);
  }
  const bool a_in_vmem = beside_a.has_value();
  b.a_in_vmem = a_in_vmem;
  b.plan =
      a_in_vmem ? *beside_a : PlanChunkMatmul(kernel_name, b.bm, k_quantum, b.fn, b.dtype, budget);
  auto AScratch = [&](Shape shape, const char* scratch_name) {
    return a_in_vmem ? ScratchSpec::VMEM(std::move(shape), b.dtype, scratch_name)
                     : ScratchSpec::HBM(std::move(shape), b.dtype, scratch_name);
  };
  switch (schedule) {
    case Schedule::kBlocking:
      grid.scratch_shapes = {
          AScratch({b.bm, b.d}, "a_full"),
          ScratchSpec::DMA({1}, "local_sems"),
          ScratchSpec::DMA({steps}, "send_sems"),
          ScratchSpec::DMA({steps}, "recv_sems"),
      };
      break;
    case Schedule::kCollective:
      grid.scratch_shapes = {
          AScratch({2, b.bm, b.dk}, "a_bufs"),    ScratchSpec::DMA({1}, "local_sems"),
          ScratchSpec::DMA({2}, "send_sems"),     ScratchSpec::DMA({2}, "recv_sems"),
          ScratchSpec::REGULAR({}, "free_slots"),
      };
      break;
    case Schedule::kBidi:
      grid.scratch_shapes = {
          AScratch({2, 2, b.bm, b.dk}, "a_bufs"),  ScratchSpec::DMA({1}, "local_sems"),
          ScratchSpec::DMA({2, 2}, "send_sems"),   ScratchSpec::DMA({2, 2}, "recv_sems"),
          ScratchSpec::REGULAR({2}, "free_slots"),
      };
      break;
  }
  if (schedule == Schedule::kBidi && a_in_vmem) {
    grid.scratch_shapes.push_back(ScratchSpec::VMEM({b.bm, b.dk}, b.dtype, "own"));
  }
  for (ScratchSpec& spec : b.plan.Scratch())
    grid.scratch_shapes.push_back(std::move(spec));
  switch (schedule) {
    case Schedule::kBlocking:
      kernel = Blocking(b);
      break;
    case Schedule::kCollective:
      kernel = Collective(b);
      break;
    case Schedule::kBidi:
      kernel = CollectiveBidi(b);
      break;
  }
  PallasCall call = pallas_call(kernel_name, kernel, grid, {{{b.bm, b.fn}, b.plan.out_dtype()}});
  call.in_names = {"a", "w"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  const P a_spec{PartitionSpec::Entry(b.others), b.ring};
  const P w_spec{nullptr, b.ring};
  Workload w{shard_map(mesh, {a_spec, w_spec}, {a_spec}, call), {}, {}};
  AddMatmulOperands(w, MatmulProblemOf(params));
  return w;
}

double FlopsPerChip(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, params);
  return 2.0 * b.bm * b.d * b.fn;
}

Bound AgMatmulBound(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, params);
  const double compute = MxuPeakSeconds(mesh, FlopsPerChip(mesh, params), b.dtype);
  const AxisLinks links = LinksOf(mesh, b.ring);
  // A ring all-gather of this device group's rows of A, V_A = bm x D elements.
  const double v = static_cast<double>(b.bm) * b.d * SizeOf(b.dtype);
  const double comm =
      std::max(links.hop_latency_s * (b.y - 1), v / links.link_bytes_per_s * (b.y - 1) / b.y);
  return {std::max(compute, comm),
          "max(2 bm D fn passes / peak FLOP/s, max(T_min (Y-1), (V_A/W_oneway)(Y-1)/Y))"};
}

// Both directions of the ring: with wraparound each device receives (Y-1)/Y of V_A over its
// two inbound links in floor(Y/2) hops (docs/references.md §3, bidirectional all-gather);
// without it the wrap hop goes the long way and the one-way bound applies.
Bound AgMatmulBidiBound(const Mesh& mesh, const Params& params) {
  const Blocks b = BlocksFor(mesh, params);
  const AxisLinks links = LinksOf(mesh, b.ring);
  if (!links.wraparound) {
    Bound bound = AgMatmulBound(mesh, params);
    bound.formula += " (no wraparound)";
    return bound;
  }
  const double compute = MxuPeakSeconds(mesh, FlopsPerChip(mesh, params), b.dtype);
  const double v = static_cast<double>(b.bm) * b.d * SizeOf(b.dtype);
  const double comm =
      std::max(links.hop_latency_s * (b.y / 2), v / (2 * links.link_bytes_per_s) * (b.y - 1) / b.y);
  return {std::max(compute, comm),
          "max(2 bm D fn passes / peak FLOP/s, max(T_min floor(Y/2), (V_A/W_ici)(Y-1)/Y))"};
}

double NoBusFactor(int) {
  return 1.0;
}

const Registration blocking(KernelInfo{
    "ag_matmul_blocking", "all-gather A over the ring axis, then one matmul (exposed gather)",
    RingMatmulParams(kNames, kAllDTypes),
    [](const Mesh& mesh, const Params& params) { return Make(mesh, params, Schedule::kBlocking); },
    AgMatmulBound, NoBusFactor, FlopsPerChip});
const Registration collective(KernelInfo{
    "ag_matmul_collective",
    "collective matmul: multiply the held D-chunk while the next one moves round the ring",
    RingMatmulParams(kNames, kAllDTypes),
    [](const Mesh& mesh, const Params& params) {
      return Make(mesh, params, Schedule::kCollective);
    },
    AgMatmulBound, NoBusFactor, FlopsPerChip});
const Registration collective_bidi(KernelInfo{
    "ag_matmul_collective_bidi",
    "bidirectional collective matmul: chunks travel both ways round the ring, ~Y/2 steps",
    RingMatmulParams(kNames, kAllDTypes),
    [](const Mesh& mesh, const Params& params) { return Make(mesh, params, Schedule::kBidi); },
    AgMatmulBidiBound, NoBusFactor, FlopsPerChip});

}  // namespace
}  // namespace tpusim::kernels
