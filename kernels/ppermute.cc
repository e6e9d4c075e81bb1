// ppermute: every device sends its shard one step to the right along a mesh axis
// (device i's block lands on device i+1, the last wraps to the first).

#include <algorithm>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn RightShift(std::string axis) {
  return [axis](Kernel& k, const Refs&) {
    const auto [x, out, send_sem, recv_sem] = k.refs("x", "out", "send_sem", "recv_sem");

    // A DMA into a device that has not entered the kernel is unsafe: meet the neighbours
    // we talk to first.
    MeetRingNeighbours(k, axis);

    AsyncCopy copy = k.async_remote_copy(x, out, send_sem, recv_sem, k.ring(axis).right_device());
    copy.start();
    copy.wait_send();
    copy.wait_recv();  // our own receive semaphore counts the block arriving from the left
  };
}

Workload Make(const Mesh& mesh, const CollectiveArgs& args) {
  const int n = CheckCollectiveArgs(mesh, args);
  const int64_t elements = static_cast<int64_t>(args.bytes / SizeOf(args.dtype));
  const int64_t shard = elements / n;
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "send_sem"), ScratchSpec::DMA({}, "recv_sem")};
  PallasCall call = pallas_call("ppermute", RightShift(args.axis), grid, {{{shard}, args.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  Workload w{shard_map(mesh, {P{args.axis}}, {P{args.axis}}, call), {}, {}};
  w.inputs.push_back(MakeCollectiveInput(args));
  if (args.functional) {
    const Array& x = w.inputs[0];
    Array expected({elements}, args.dtype);
    for (int i = 0; i < n; ++i)
      expected.Place(x.Slice({i * shard}, {shard}), {((i + 1) % n) * shard});
    w.expected.push_back(std::move(expected));
  }
  return w;
}

Bound Analytic(const Mesh& mesh, const CollectiveArgs& args) {
  const AxisLinks a = LinksOf(mesh, args.axis);
  // Without wraparound the last device reaches the first the long way, over n-1 links.
  const int hops = a.size < 2 ? 0 : (a.wraparound ? 1 : a.size - 1);
  const double shard = static_cast<double>(args.bytes) / a.size;
  return {hops * a.hop_latency_s + (a.size < 2 ? 0 : shard / a.link_bytes_per_s),
          "hops x T_min + (V/X) / W_oneway"};
}

const Registration registration(KernelInfo{"ppermute",
                                           "right shift of every shard by one device along an axis",
                                           Make, Analytic, [](int) { return 1.0; }});

}  // namespace
}  // namespace tpusim::kernels
