// All-gather over several mesh axes at once (Pallas's library all-gather takes one). Device
// (i_1, ..., i_N) on axes of sizes (X_1, ..., X_N) holds block [i_1, ..., i_N] of an
// (X_1, ..., X_N, n) array; every device ends with all of it.
//
// Each block is cut into N parts, and each part into halves that go round the rings in
// opposite directions. Part p is gathered along axis p first, then along axis p+1 (carrying
// the line it gathered), and so on round the axes. All parts run at once, so in every step
// the links of every axis carry data and a device receives over all 2N of its links:
// T ~ V / (N W_ici) (docs/references.md §3: V/(W_ici N_axes)). Neighbours are addressed by
// their full mesh coordinates, so the code runs on any mesh whatever its rank.
//
// all_gather_2d is the same kernel over two axes, named as before.

#include <algorithm>
#include <array>
#include <numeric>

#include "base/errors.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

// One share of every block: which elements, the axis it is gathered along first, and
// which way round the rings it travels.
struct Share {
  int64_t begin = 0;
  int64_t size = 0;
  int first_axis = 0;
  int direction = +1;
};

std::vector<Share> SharesOf(int64_t block, int axes) {
  std::vector<Share> shares;
  for (int a = 0; a < axes; ++a) {
    const int64_t begin = block * a / axes, end = block * (a + 1) / axes;
    const int64_t half = (end - begin) / 2;
    shares.push_back({begin, half, a, +1});
    shares.push_back({begin + half, end - begin - half, a, -1});
  }
  return shares;
}

// Where a share is, advanced one step at a time: the axis it is gathered along now (after
// `phase` finished ones) and the hops made along it. Its semaphores for the phase are sliced
// on the phase's first copy: per DMA they were two views made and freed again, a miss each on
// a pod. Small, as the kernel's own state is read again after every wait, when a pod has
// evicted it.
struct Cursor {
  int phase = 0;
  int axis = 0;
  int step = 0;
  bool sliced = false;                        // whether `sems` are this phase's
  std::array<Ref, 2 * kStepSemaphores> sems;  // [send, recv] per parity
};

KernelFn AllGatherNd(std::vector<std::string> axes, int64_t block) {
  return [=](Kernel& k, const Refs&) {
    const Ref& x = k.ref("x");      // (1, ..., 1, n): this device's block
    const Ref& out = k.ref("out");  // (X_1, ..., X_N, n)
    const Ref& local_sem = k.ref("local_sem");
    const Ref& send_sems = k.ref("send_sems");  // [share, phase, step parity]
    const Ref& recv_sems = k.ref("recv_sems");
    const int n = static_cast<int>(axes.size());
    std::vector<Ring> rings;
    for (const std::string& axis : axes)
      rings.push_back(k.ring(axis));

    auto own_index = [&](int axis) {
      return Slice(rings[static_cast<size_t>(axis)].index, 1, false);
    };
    {
      auto scope = k.named_scope("own block");
      std::vector<Slice> at;
      for (int a = 0; a < n; ++a)
        at.push_back(own_index(a));
      AsyncCopy own = k.async_copy(x, out.Sliced(at), local_sem);
      own.start();
      own.wait();
    }

    const Ref barrier = k.barrier_semaphore();
    int expected = 0;
    for (const Ring& ring : rings) {
      if (ring.size < 2) continue;
      k.signal(barrier, 1, ring.right_device());
      k.signal(barrier, 1, ring.left_device());
      expected += 2;
    }
    if (expected > 0) k.wait(barrier, expected);

    const std::vector<Share> shares = SharesOf(block, n);
    int steps = 0;
    for (const Ring& ring : rings)
      steps += ring.size - 1;
    const std::string scope_name = std::to_string(n) + "-D step ";
    std::string step_name = scope_name;
    std::vector<Cursor> cursors(shares.size());
    // Phases of one device's axes (size 1) have no steps: a share starts past them.
    const auto enter_phase = [&](const Share& share, Cursor& c) {
      for (; c.phase < n; ++c.phase) {
        c.axis = (share.first_axis + c.phase) % n;
        if (rings[static_cast<size_t>(c.axis)].size > 1) return;
      }
    };
    for (size_t s = 0; s < shares.size(); ++s)
      enter_phase(shares[s], cursors[s]);
    std::vector<Slice> region(static_cast<size_t>(n + 1), Slice(0, 0, false));
    std::vector<AsyncCopy> copies;
    copies.reserve(shares.size());
    for (int step = 0; step < steps; ++step) {
      step_name.resize(scope_name.size());
      step_name += std::to_string(step);
      auto scope = k.named_scope(step_name);
      copies.clear();
      for (size_t s = 0; s < shares.size(); ++s) {
        const Share& share = shares[s];
        if (share.size == 0) continue;
        Cursor& c = cursors[s];
        const Ring& ring = rings[static_cast<size_t>(c.axis)];
        // The blocks that reached this device after c.step hops along c.axis move on: whole
        // along the axes this share has finished, this device's own line along the others.
        for (int a = 0; a < n; ++a) {
          int done = a - share.first_axis;  // the axis's place in the share's order
          if (done < 0) done += n;
          const Ring& along = rings[static_cast<size_t>(a)];
          region[static_cast<size_t>(a)] =
              done < c.phase ? Slice(0, along.size, false) : own_index(a);
        }
        region[static_cast<size_t>(c.axis)] =
            Slice(ring.index_at(-share.direction * c.step), 1, false);
        region[static_cast<size_t>(n)] = Slice(share.begin, share.size, false);
        const Ref moving = out.Sliced(region);
        // Phases use their own semaphores: a share's neighbour changes with the axis, and
        // a new neighbour's shard is not ordered after the old one's. Within a phase, steps
        // take turns on two, as on a ring (kernels/ring.h).
        if (!c.sliced) {
          c.sliced = true;
          const auto slot = static_cast<int64_t>(s);
          for (int p = 0; p < kStepSemaphores; ++p) {
            c.sems[static_cast<size_t>(2 * p)] = send_sems.at(slot, c.phase, p);
            c.sems[static_cast<size_t>(2 * p + 1)] = recv_sems.at(slot, c.phase, p);
          }
        }
        const auto parity = static_cast<size_t>(c.step % kStepSemaphores);
        copies.push_back(
            k.async_remote_copy(moving, moving, c.sems[2 * parity], c.sems[2 * parity + 1],
                                share.direction > 0 ? ring.right_device() : ring.left_device()));
        copies.back().start();
        // The next step: along this axis, or (its line gathered) on to the next axis.
        if (++c.step == ring.size - 1) {
          c.step = 0;
          c.sliced = false;
          ++c.phase;
          enter_phase(share, c);
        }
      }
      for (AsyncCopy& c : copies)
        c.wait_send();
      // Each share's copy from the opposite neighbour has the same shape as ours.
      for (AsyncCopy& c : copies)
        c.wait_recv();
    }
  };
}

Workload MakeOver(const Mesh& mesh, const Params& params, const std::string& name,
                  const std::vector<std::string>& axes) {
  const CollectiveProblem problem{axes.front(), params.Bytes("bytes"), DTypeOf(params),
                                  params.functional, params.seed};
  Shape global;
  int64_t others = 1;
  for (const std::string& axis : axes) {
    global.push_back(mesh.AxisSize(axis));
    if (axis != axes.front()) others *= mesh.AxisSize(axis);
  }
  // V splits into one whole-element block per device of the axes.
  CheckCollectiveProblem(mesh, problem, static_cast<int>(others));
  const int64_t devices =
      std::accumulate(global.begin(), global.end(), int64_t{1}, std::multiplies<int64_t>());
  const int64_t block = static_cast<int64_t>(problem.bytes / SizeOf(problem.dtype)) / devices;
  global.push_back(block);
  const auto shares = static_cast<int64_t>(2 * axes.size());
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  const Shape semaphores = {shares, static_cast<int64_t>(axes.size()), kStepSemaphores};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"),
                         ScratchSpec::DMA(semaphores, "send_sems"),
                         ScratchSpec::DMA(semaphores, "recv_sems")};
  PallasCall call = pallas_call(name, AllGatherNd(axes, block), grid, {{global, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  std::vector<PartitionSpec::Entry> spec(axes.begin(), axes.end());
  spec.emplace_back(nullptr);
  Workload w{shard_map(mesh, {PartitionSpec(std::move(spec))}, {P{}}, std::move(call)), {}, {}};
  w.inputs.push_back(EntryInput(global, problem.dtype, problem.seed, 0, problem.functional));
  if (problem.functional) w.expected.push_back(w.inputs[0]);
  return w;
}

// The latency term max(T_min sum|X_i|/2) (T_min (X_i - 1) on an axis without wraparound),
// and a bandwidth term from cuts: the devices of any sub-mesh over a subset S of the axes
// hold G_S of the N blocks, so the other N - G_S must enter it, over the links of the axes
// outside S, G_S x sum W_in of them (W_in: both links of a ring, one of a line, as at its
// end). S = {} is (V/(W_ici N_axes))(N-1)/N, the largest on a torus of equal links; on
// TPU7x the chip (S = {chiplet}) is: its die-to-die link brings nothing new into the chip.
Bound BoundOver(const Mesh& mesh, const Params& params, const std::vector<std::string>& axes) {
  double latency = 0;
  int devices = 1;
  std::vector<AxisLinks> links;
  for (const std::string& axis : axes) {
    const AxisLinks a = LinksOf(mesh, axis);
    devices *= a.size;
    links.push_back(a);
    if (a.size < 2) continue;
    // With wraparound a ring has X/2 hops to its far side; a line has X-1 hops.
    latency += a.hop_latency_s * (a.wraparound ? a.size / 2.0 : a.size - 1.0);
  }
  Bound b;
  if (devices < 2) {
    b.formula = "one device: nothing moves";
    return b;
  }
  const double v = static_cast<double>(params.Bytes("bytes"));
  const size_t n = links.size();
  double transfer = 0;
  for (uint32_t inside = 0; inside + 1 < (uint32_t{1} << n); ++inside) {
    double group = 1;    // G_S: devices of the sub-mesh over the axes in S
    double inbound = 0;  // bytes/s into one of its devices over the axes outside S
    for (size_t i = 0; i < n; ++i) {
      const AxisLinks& a = links[i];
      if (inside & (uint32_t{1} << i)) {
        group *= a.size;
      } else if (a.size >= 2) {
        inbound += a.wraparound ? 2 * a.link_bytes_per_s : a.link_bytes_per_s;
      }
    }
    if (inbound > 0)
      transfer = std::max(transfer, v * (devices - group) / devices / (group * inbound));
  }
  b.seconds = std::max(latency, transfer);
  b.formula =
      "max(T_min sum|X_i|/2, max over sub-meshes S of V (N-G_S)/(N G_S W_in(S))), N devices "
      "over the axes, G_S in the sub-mesh, W_in(S) the bandwidth into one of them over the other "
      "axes (one link on an axis without wraparound, where T_min counts X_i-1 hops); S = {} gives "
      "(V/(W_ici N_axes))(N-1)/N";
  return b;
}

// all_gather_nd: the axes named by "axes", every mesh axis by default.
std::vector<std::string> AxesOf(const Mesh& mesh, const Params& params) {
  std::vector<std::string> axes = params.Has("axes") ? params.Strings("axes") : mesh.axis_names();
  for (size_t i = 0; i < axes.size(); ++i) {
    mesh.AxisSize(axes[i]);  // throws for an axis the mesh does not have
    if (std::find(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(i), axes[i]) !=
        axes.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw ParamError({"axes"}, "all_gather_nd names mesh axis '" + axes[i] +
                                     "' twice in axes; name each axis once.");
    }
  }
  if (axes.empty()) {
    throw ParamError({"axes"}, "all_gather_nd needs at least one mesh axis in axes.");
  }
  return axes;
}

// all_gather_2d: "axis" and "axis2", by default the first mesh axis other than axis.
std::vector<std::string> TwoAxesOf(const Mesh& mesh, const Params& params) {
  const std::string& axis = params.String("axis");
  if (params.Has("axis2")) {
    const std::string& axis2 = params.String("axis2");
    if (axis2 == axis) {
      throw ParamError({"axis", "axis2"},
                       "all_gather_2d needs two different mesh axes, got '" + axis + "' twice.");
    }
    return {axis, axis2};
  }
  for (const auto& name : mesh.axis_names()) {
    if (name != axis) return {axis, name};
  }
  throw Error(ErrorKind::kInvalidArgument, "all_gather_2d gathers over two mesh axes, but " +
                                               mesh.Describe() +
                                               " has only one; use all_gather_bidi.");
}

// No bus factor: it is defined over one axis, and all_gather_nd has none.
const Registration nd_registration(KernelInfo{
    "all_gather_nd", "all-gather over several mesh axes at once (axes, by default all)",
    ParamList(
        Param::Strings("axes", "the mesh axes to gather over, e.g. x,y,z").Auto("every mesh axis"),
        BytesParam(), DTypeParam()),
    [](const Mesh& mesh, const Params& params) {
      return MakeOver(mesh, params, "all_gather_nd", AxesOf(mesh, params));
    },
    [](const Mesh& mesh, const Params& params) {
      return BoundOver(mesh, params, AxesOf(mesh, params));
    }});

// The registry's factor sees one axis size; (N-1)/N of the N = X*Y devices is what
// nccl-tests would report, which this approximates with X.
const Registration two_d_registration(KernelInfo{
    "all_gather_2d", "all-gather over two mesh axes at once: axis and axis2",
    ParamList(AxisParam().Description("first mesh axis of the gather"), Axis2Param(), BytesParam(),
              DTypeParam()),
    [](const Mesh& mesh, const Params& params) {
      return MakeOver(mesh, params, "all_gather_2d", TwoAxesOf(mesh, params));
    },
    [](const Mesh& mesh, const Params& params) {
      return BoundOver(mesh, params, TwoAxesOf(mesh, params));
    },
    AllGatherBusFactor});

}  // namespace
}  // namespace tpusim::kernels
