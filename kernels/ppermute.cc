// ppermute: every device sends its shard one step to the right along a mesh axis
// (device i's block lands on device i+1, the last wraps to the first).

#include <algorithm>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/problem_params.h"
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

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const int n = CheckCollectiveProblem(mesh, problem);
  const int64_t elements = static_cast<int64_t>(problem.bytes / SizeOf(problem.dtype));
  const int64_t shard = elements / n;
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "send_sem"), ScratchSpec::DMA({}, "recv_sem")};
  PallasCall call =
      pallas_call("ppermute", RightShift(problem.axis), grid, {{{shard}, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  Workload w{shard_map(mesh, {P{problem.axis}}, {P{problem.axis}}, call), {}, {}};
  w.inputs.push_back(MakeCollectiveInput(problem));
  if (problem.functional) {
    const Array& x = w.inputs[0];
    Array expected({elements}, problem.dtype);
    for (int i = 0; i < n; ++i)
      expected.Place(x.Slice({i * shard}, {shard}), {((i + 1) % n) * shard});
    w.expected.push_back(std::move(expected));
  }
  return w;
}

Bound Analytic(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const AxisLinks a = LinksOf(mesh, problem.axis);
  // Without wraparound the last device reaches the first the long way, over n-1 links.
  const int hops = a.size < 2 ? 0 : (a.wraparound ? 1 : a.size - 1);
  const double shard = static_cast<double>(problem.bytes) / a.size;
  return {hops * a.hop_latency_s + (a.size < 2 ? 0 : shard / a.link_bytes_per_s),
          "hops x T_min + (V/X) / W_oneway"};
}

const Registration registration(KernelInfo{
    "ppermute", "right shift of every shard by one device along an axis", CollectiveParams(), Make,
    Analytic, [](int) { return 1.0; }});

}  // namespace
}  // namespace tpusim::kernels
