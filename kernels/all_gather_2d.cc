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

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/registry.h"
#include "sim/errors.h"

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
  return [=](Kernel& k, const Refs& refs) {
    const Ref& x = refs[0];    // (1, 1, n): this device's block
    const Ref& out = refs[1];  // (X, Y, n)
    const Ref& local_sem = refs[2];
    const Ref& send_sems = refs[3];  // [4 quarters, steps]
    const Ref& recv_sems = refs[4];
    const int nx = k.axis_size(axis_a);
    const int ny = k.axis_size(axis_b);
    const std::vector<int> here = k.mesh().CoordsOf(k.device_id());
    const int ia = k.mesh().AxisIndex(axis_a);
    const int ib = k.mesh().AxisIndex(axis_b);
    const int i = here[ia];
    const int j = here[ib];
    // A neighbour as full mesh coordinates: ours, moved along one of the two axes.
    auto neighbour = [&](int axis, int size, int delta) {
      std::vector<int> coords = here;
      coords[axis] = ((coords[axis] + delta) % size + size) % size;
      return DeviceId(coords);
    };

    {
      auto scope = k.named_scope("own block");
      AsyncCopy own = k.async_copy(x.at(0, 0), out.at(i, j), local_sem);
      own.start();
      own.wait();
    }

    const Ref barrier = k.barrier_semaphore();
    int expected = 0;
    for (auto [axis, size] : {std::pair{ia, nx}, std::pair{ib, ny}}) {
      if (size < 2) continue;
      k.signal(barrier, 1, neighbour(axis, size, +1));
      k.signal(barrier, 1, neighbour(axis, size, -1));
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
        int axis;
        int size;
        if (first_phase == a_first) {
          // Along a: in phase 1 our line's block (i - d s, j) moves on; in phase 2 the whole
          // row of blocks (i - d s, *) gathered along b.
          axis = ia;
          size = nx;
          const int from = ((i - d * s) % nx + nx) % nx;
          region = first_phase ? out.at(from, ds(j, 1), ds(quarter.begin, quarter.size))
                               : out.at(from, ds(0, ny), ds(quarter.begin, quarter.size));
        } else {
          // Along b, the same with the roles swapped.
          axis = ib;
          size = ny;
          const int from = ((j - d * s) % ny + ny) % ny;
          region = first_phase ? out.at(ds(i, 1), from, ds(quarter.begin, quarter.size))
                               : out.at(ds(0, nx), from, ds(quarter.begin, quarter.size));
        }
        copies.push_back(k.async_remote_copy(region, region, send_sems.at(q, step),
                                             recv_sems.at(q, step), neighbour(axis, size, d)));
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

std::string SecondAxis(const Mesh& mesh, const CollectiveArgs& args) {
  if (!args.axis2.empty()) return args.axis2;
  for (const auto& name : mesh.axis_names()) {
    if (name != args.axis) return name;
  }
  throw Error(ErrorKind::kInvalidArgument, "all_gather_2d gathers over two mesh axes, but " +
                                               mesh.Describe() +
                                               " has only one; use all_gather_bidi.");
}

Workload Make(const Mesh& mesh, const CollectiveArgs& args) {
  const std::string axis_b = SecondAxis(mesh, args);
  if (axis_b == args.axis) {
    throw Error(ErrorKind::kInvalidArgument,
                "all_gather_2d needs two different mesh axes, got '" + args.axis + "' twice.");
  }
  const int nx = mesh.AxisSize(args.axis);
  const int ny = mesh.AxisSize(axis_b);
  CheckCollectiveArgs(mesh, args, ny);  // V splits into X * Y whole-element blocks
  const int64_t elements = static_cast<int64_t>(args.bytes / SizeOf(args.dtype));
  const int64_t block = elements / (static_cast<int64_t>(nx) * ny);
  const int64_t steps = std::max(nx + ny - 2, 1);
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"),
                         ScratchSpec::DMA({4, steps}, "send_sems"),
                         ScratchSpec::DMA({4, steps}, "recv_sems")};
  const Shape global = {nx, ny, block};
  PallasCall call = pallas_call("all_gather_2d", AllGather2d(args.axis, axis_b, block), grid,
                                {{global, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  Workload w{shard_map(mesh, {P{args.axis, axis_b, nullptr}}, {P{}}, std::move(call)), {}, {}};
  w.inputs.push_back(args.functional ? Array::Random(global, args.dtype, args.seed * 1000003)
                                     : Array::Placeholder(global, args.dtype));
  if (args.functional) w.expected.push_back(w.inputs[0]);
  return w;
}

Bound Analytic(const Mesh& mesh, const CollectiveArgs& args) {
  const std::string axis_b = SecondAxis(mesh, args);
  double latency = 0;
  double inbound = 0;  // bytes/s a device can receive over the two axes' links
  int devices = 1;
  for (const auto& axis : {args.axis, axis_b}) {
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
  const double v = static_cast<double>(args.bytes);
  b.seconds = std::max(latency, v * (devices - 1) / devices / inbound);
  b.formula =
      "max(T_min sum|X_i|/2, (V/(W_ici N_axes))(N-1)/N), N = X*Y devices; W_oneway and "
      "T_min (X_i-1) on an axis without wraparound";
  return b;
}

KernelInfo Info() {
  KernelInfo info;
  info.name = "all_gather_2d";
  info.summary =
      "all-gather over two mesh axes at once: --axis and the first other axis (or axis2)";
  info.make = Make;
  info.bound = Analytic;
  // The registry's factor sees one axis size; (N-1)/N of the N = X*Y devices is what
  // nccl-tests would report, which this approximates with X.
  info.bus_factor = [](int axis_size) { return static_cast<double>(axis_size - 1) / axis_size; };
  return info;
}

const Registration registration(Info());

}  // namespace
}  // namespace tpusim::kernels
