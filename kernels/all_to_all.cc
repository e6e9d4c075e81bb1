// All-to-all along one mesh axis: device i sends block j of its input to device j, where it
// becomes block i of j's output (a block transpose across the axis). Every device starts
// one remote DMA per destination at once and lets the torus route them the short way, so
// on a ring with wraparound each block crosses on average a quarter of the ring and both
// directions of every link are busy: T ~ V / (4 W_ici) (docs/references.md §3).

#include <algorithm>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/all_gather.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn AllToAll(std::string axis, int64_t block, bool relay) {
  return [axis, block, relay](Kernel& k, const Refs&) {
    const Ref& x = k.ref("x");
    const Ref& out = k.ref("out");
    const Ref& local_sem = k.ref("local_sem");
    // send_sems [X]: one per destination; recv_sems [X]: one per source, so each wait
    // names its sender; relay_buf (VMEM): the half block we pass on for our right
    // neighbour; relay_sems DMA [3]: relay send, relay receive, forward send.
    const Ref &send_sems = k.ref("send_sems"), &recv_sems = k.ref("recv_sems");
    const Ref &relay_buf = k.ref("relay_buf"), &relay_sems = k.ref("relay_sems");
    const Ring ring = k.ring(axis);
    const int n = ring.size, me = ring.index;
    auto part = [&](const Ref& ref, int index) { return ref.at(ds(index * block, block)); };

    AsyncCopy own = k.async_copy(part(x, me), part(out, me), local_sem);
    own.start();
    MeetEveryoneOnRing(k, k.ring(axis));  // everyone on the axis writes to us

    // The device half way round an even ring is as near one way as the other, and the
    // torus routes such ties one way (+). With `relay`, the second half of that block goes
    // the other way instead: one hop left into the left neighbour's relay buffer, which
    // forwards it (X/2 - 1 hops, also leftwards). Both directions then carry X^2/8 blocks.
    const int opposite = ring.index_at(n / 2);
    const int64_t direct = relay ? block / 2 : block;
    const int64_t relayed = block - direct;

    // Farthest destinations first, alternating directions: the long routes get the DMA
    // engines while every link is still free, and the short ones fill in behind them.
    std::vector<int> order;
    for (int d = 1; static_cast<int>(order.size()) < n - 1; ++d) {
      order.push_back(d);
      if (static_cast<int>(order.size()) < n - 1) order.push_back(n - d);
    }
    std::reverse(order.begin(), order.end());
    std::vector<AsyncCopy> sends;
    {
      auto scope = k.named_scope("send blocks");
      if (relay) {
        sends.push_back(k.async_remote_copy(x.at(ds(opposite * block + direct, relayed)), relay_buf,
                                            relay_sems.at(0), relay_sems.at(1),
                                            ring.left_device()));
        sends.back().start();
      }
      for (int offset : order) {
        const int to = ring.index_at(offset);
        const int64_t size = to == opposite ? direct : block;
        sends.push_back(k.async_remote_copy(x.at(ds(to * block, size)),
                                            out.at(ds(me * block, size)), send_sems.at(to),
                                            recv_sems.at(me), {{axis, to}}));
        sends.back().start();
      }
    }
    if (relay) {
      auto scope = k.named_scope("relay");
      // Our right neighbour's half block for the device opposite it: pass it on, to land on
      // that device's receive semaphore for our right neighbour, next to the direct half.
      const int source = ring.index_at(1);
      const int target = ring.index_at(1 + n / 2);
      AsyncCopy arrived = k.async_remote_copy(relay_buf, relay_buf, relay_sems.at(0),
                                              relay_sems.at(1), {{axis, source}});
      arrived.wait_recv();
      AsyncCopy forward =
          k.async_remote_copy(relay_buf, out.at(ds(source * block + direct, relayed)),
                              relay_sems.at(2), recv_sems.at(source), {{axis, target}});
      forward.start();
      forward.wait_send();
    }
    auto scope = k.named_scope("receive blocks");
    for (AsyncCopy& send : sends)
      send.wait_send();
    for (int offset : order) {
      // Block `from` of our output arrives from device `from` (and, for the opposite
      // device, half of it through our left neighbour) on recv_sems[from]: one wait with a
      // descriptor of the whole block covers both.
      const int from = ring.index_at(-offset);
      AsyncCopy incoming = k.async_remote_copy(part(out, from), part(out, from), send_sems.at(from),
                                               recv_sems.at(from), {{axis, from}});
      incoming.wait_recv();
    }
    own.wait();
  };
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const int n = CheckCollectiveProblem(mesh, problem, mesh.AxisSize(problem.axis));
  const int64_t elements = static_cast<int64_t>(problem.bytes / SizeOf(problem.dtype));
  const int64_t per_device = elements / n;
  const int64_t block = per_device / n;
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  // Relay half of the opposite block when the ring has ties (even, wrapped, past 2) and
  // the half block fits in a quarter of VMEM; otherwise send it straight.
  const AxisLinks links = LinksOf(mesh, problem.axis);
  const uint64_t relayed_bytes = static_cast<uint64_t>(block - block / 2) * SizeOf(problem.dtype);
  const bool relay = links.wraparound && n % 2 == 0 && n > 2 && block >= 2 &&
                     relayed_bytes <= mesh.topology().chip().vmem().capacity_bytes() / 4;
  grid.scratch_shapes = {
      ScratchSpec::DMA({}, "local_sem"), ScratchSpec::DMA({n}, "send_sems"),
      ScratchSpec::DMA({n}, "recv_sems"),
      ScratchSpec::VMEM({relay ? block - block / 2 : 1}, problem.dtype, "relay_buf"),
      ScratchSpec::DMA({3}, "relay_sems")};
  PallasCall call = pallas_call("all_to_all", AllToAll(problem.axis, block, relay), grid,
                                {{{per_device}, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  Workload w{shard_map(mesh, {P{problem.axis}}, {P{problem.axis}}, call), {}, {}};
  w.inputs.push_back(MakeCollectiveInput(problem));
  if (problem.functional) {
    // Output block i of device j = input block j of device i.
    const Array& x = w.inputs[0];
    Array expected({elements}, problem.dtype);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        expected.Place(x.Slice({(i * n + j) * block}, {block}), {(j * n + i) * block});
    }
    w.expected.push_back(std::move(expected));
  }
  return w;
}

Bound Analytic(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const AxisLinks a = LinksOf(mesh, problem.axis);
  const double v = static_cast<double>(problem.bytes);
  const int x = a.size;
  Bound b;
  if (x < 2) {
    b.formula = "one device: nothing moves";
    return b;
  }
  // Each device sends V/X^2 to each other device. With wraparound the byte-hops
  // V/X^2 * X * sum_d min(d, X-d) spread over 2X link directions; sum_d min(d, X-d) is
  // floor(X^2/4), which gives V/(4 W_ici) for even X. Without wraparound the middle link
  // carries floor(X^2/4) blocks each way.
  const double quarter = static_cast<double>((x * x) / 4) / (static_cast<double>(x) * x);
  if (a.wraparound) {
    const double w_ici = 2 * a.link_bytes_per_s;
    b.seconds = std::max(a.hop_latency_s * (x / 2), v * quarter / w_ici);
    b.formula = "max(T_min floor(X/2), V floor(X^2/4)/(X^2 W_ici)) = V/(4 W_ici) for even X";
  } else {
    b.seconds = std::max(a.hop_latency_s * (x - 1), v * quarter / a.link_bytes_per_s);
    b.formula = "max(T_min (X-1), V floor(X^2/4)/(X^2 W_oneway)) (no wraparound)";
  }
  return b;
}

// nccl-tests' alltoall bus factor is all-gather's, (X-1)/X.
const Registration registration(KernelInfo{
    "all_to_all", "device i's block j goes to device j: one remote DMA per destination",
    CollectiveParams(), Make, Analytic, AllGatherBusFactor});

}  // namespace
}  // namespace tpusim::kernels
