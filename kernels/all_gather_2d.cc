// All-gather over two mesh axes at once (Pallas's library all-gather takes one). Device
// (i, j) on axes (a, b) of sizes (X, Y) holds block [i, j] of an (X, Y, n) array; every
// device ends with all of it.
//
// Each block is halved. Half A is gathered along a first (a bidirectional ring: a quarter
// of the block each way), then the X gathered A-halves of a's line are passed along b;
// half B goes b first, then a. Both halves run at once, so in each phase the links of both
// axes carry data, and every device receives over all four of its links:
// T ~ V / (2 W_ici) (docs/references.md §3: V/(W_ici N_axes)). Neighbours are addressed by their
// full mesh coordinates, so the same code runs on 2-D and 3-D meshes.

#include <algorithm>

#include "base/errors.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

// One quarter of every block: which elements, and which way round the ring it travels.
struct Quarter {
  int64_t begin = 0;
  int64_t size = 0;
  int direction = +1;
};

KernelFn AllGather2d(std::string axis_a, std::string axis_b, int64_t block) {
  return [=](Kernel& k, const Refs&) {
    const Ref& x = k.ref("x");      // (1, 1, n): this device's block
    const Ref& out = k.ref("out");  // (X, Y, n)
    const Ref& local_sem = k.ref("local_sem");
    const Ref& send_sems = k.ref("send_sems");  // [4 quarters, steps]
    const Ref& recv_sems = k.ref("recv_sems");
    const Ring ring_a = k.ring(axis_a), ring_b = k.ring(axis_b);
    const int nx = ring_a.size, ny = ring_b.size;
    const int i = ring_a.index, j = ring_b.index;
    // The next device along a ring, in direction +1 (right) or -1 (left).
    auto neighbour = [](const Ring& ring, int direction) {
      return direction > 0 ? ring.right_device() : ring.left_device();
    };

    {
      auto scope = k.named_scope("own block");
      AsyncCopy own = k.async_copy(x.at(0, 0), out.at(i, j), local_sem);
      own.start();
      own.wait();
    }

    const Ref barrier = k.barrier_semaphore();
    int expected = 0;
    for (const Ring* ring : {&ring_a, &ring_b}) {
      if (ring->size < 2) continue;
      k.signal(barrier, 1, ring->right_device());
      k.signal(barrier, 1, ring->left_device());
      expected += 2;
    }
    if (expected > 0) k.wait(barrier, expected);

    // Quarters 0, 1 (half A) go along a, then b; quarters 2, 3 (half B) along b, then a.
    const int64_t half = block / 2;
    const Quarter quarters[4] = {
        {0, half / 2, +1},
        {half / 2, half - half / 2, -1},
        {half, (block - half) / 2, +1},
        {half + (block - half) / 2, block - half - (block - half) / 2, -1}};
    const int steps = (nx - 1) + (ny - 1);
    for (int step = 0; step < steps; ++step) {
      auto scope = k.named_scope("2-D step " + std::to_string(step));
      std::vector<AsyncCopy> copies;
      for (int q = 0; q < 4; ++q) {
        const Quarter& quarter = quarters[q];
        if (quarter.size == 0) continue;
        const bool a_first = q < 2;
        const int first_size = a_first ? nx : ny;
        const bool first_phase = step < first_size - 1;
        const int s = first_phase ? step : step - (first_size - 1);
        const int d = quarter.direction;
        Ref region;
        const Ring* ring;
        if (first_phase == a_first) {
          // Along a: in phase 1 our line's block (i - d s, j) moves on; in phase 2 the whole
          // row of blocks (i - d s, *) gathered along b.
          ring = &ring_a;
          const int from = ring_a.index_at(-d * s);
          region = first_phase ? out.at(from, ds(j, 1), ds(quarter.begin, quarter.size))
                               : out.at(from, ds(0, ny), ds(quarter.begin, quarter.size));
        } else {
          // Along b, the same with the roles swapped.
          ring = &ring_b;
          const int from = ring_b.index_at(-d * s);
          region = first_phase ? out.at(ds(i, 1), from, ds(quarter.begin, quarter.size))
                               : out.at(ds(0, nx), from, ds(quarter.begin, quarter.size));
        }
        copies.push_back(k.async_remote_copy(region, region, send_sems.at(q, step),
                                             recv_sems.at(q, step), neighbour(*ring, d)));
        copies.back().start();
      }
      for (AsyncCopy& c : copies)
        c.wait_send();
      // Each quarter's copy from the opposite neighbour has the same shape as ours.
      for (AsyncCopy& c : copies)
        c.wait_recv();
    }
  };
}

std::string SecondAxis(const Mesh& mesh, const Params& params) {
  const std::string& axis = params.String("axis");
  if (params.Has("axis2")) {
    const std::string& axis2 = params.String("axis2");
    if (axis2 == axis) {
      throw ParamError({"axis", "axis2"},
                       "all_gather_2d needs two different mesh axes, got '" + axis + "' twice.");
    }
    return axis2;
  }
  for (const auto& name : mesh.axis_names()) {
    if (name != axis) return name;
  }
  throw Error(ErrorKind::kInvalidArgument, "all_gather_2d gathers over two mesh axes, but " +
                                               mesh.Describe() +
                                               " has only one; use all_gather_bidi.");
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const std::string axis_b = SecondAxis(mesh, params);
  const int nx = mesh.AxisSize(problem.axis);
  const int ny = mesh.AxisSize(axis_b);
  CheckCollectiveProblem(mesh, problem, ny);  // V splits into X * Y whole-element blocks
  const int64_t elements = static_cast<int64_t>(problem.bytes / SizeOf(problem.dtype));
  const int64_t block = elements / (static_cast<int64_t>(nx) * ny);
  const int64_t steps = std::max(nx + ny - 2, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"),
                         ScratchSpec::DMA({4, steps}, "send_sems"),
                         ScratchSpec::DMA({4, steps}, "recv_sems")};
  const Shape global = {nx, ny, block};
  PallasCall call = pallas_call("all_gather_2d", AllGather2d(problem.axis, axis_b, block), grid,
                                {{global, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  Workload w{shard_map(mesh, {P{problem.axis, axis_b, nullptr}}, {P{}}, std::move(call)), {}, {}};
  w.inputs.push_back(EntryInput(global, problem.dtype, problem.seed, 0, problem.functional));
  if (problem.functional) w.expected.push_back(w.inputs[0]);
  return w;
}

Bound Analytic(const Mesh& mesh, const Params& params) {
  const std::string axis_b = SecondAxis(mesh, params);
  double latency = 0;
  double inbound = 0;  // bytes/s a device can receive over the two axes' links
  int devices = 1;
  for (const auto& axis : {params.String("axis"), axis_b}) {
    const AxisLinks a = LinksOf(mesh, axis);
    devices *= a.size;
    if (a.size < 2) continue;
    // With wraparound a ring has X/2 hops to its far side and both links bring data in
    // (W_ici); a line has X-1 hops and its end chips one inbound link (W_oneway).
    latency += a.hop_latency_s * (a.wraparound ? a.size / 2.0 : a.size - 1.0);
    inbound += a.wraparound ? 2 * a.link_bytes_per_s : a.link_bytes_per_s;
  }
  Bound b;
  if (devices < 2) {
    b.formula = "one device: nothing moves";
    return b;
  }
  const double v = static_cast<double>(params.Bytes("bytes"));
  b.seconds = std::max(latency, v * (devices - 1) / devices / inbound);
  b.formula =
      "max(T_min sum|X_i|/2, (V/(W_ici N_axes))(N-1)/N), N = X*Y devices; W_oneway and "
      "T_min (X_i-1) on an axis without wraparound";
  return b;
}

// The registry's factor sees one axis size; (N-1)/N of the N = X*Y devices is what
// nccl-tests would report, which this approximates with X.
const Registration registration(KernelInfo{
    "all_gather_2d", "all-gather over two mesh axes at once: axis and axis2",
    ParamList(AxisParam().Description("first mesh axis of the gather"), Axis2Param(), BytesParam(),
              DTypeParam()),
    Make, Analytic, AllGatherBusFactor});

}  // namespace
}  // namespace tpusim::kernels
