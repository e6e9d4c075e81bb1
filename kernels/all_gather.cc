#include "kernels/all_gather.h"

namespace tpusim::kernels {

using namespace dsl;

Workload AllGatherWorkload(const Mesh& mesh, const CollectiveProblem& problem, PallasCall call) {
  Workload w{shard_map(mesh, {P{problem.axis}}, {P{}}, std::move(call)), {}, {}};
  w.inputs.push_back(MakeCollectiveInput(problem));
  if (problem.functional) w.expected.push_back(w.inputs[0]);  // gathering reassembles the input
  return w;
}

PallasCall AllGatherCallOf(const std::string& name, int axis_size, const ShapeDtype& block,
                           KernelFn kernel, const std::vector<std::string>& step_semaphores) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem")};
  for (const std::string& sems : step_semaphores)
    grid.scratch_shapes.push_back(ScratchSpec::DMA({kStepSemaphores}, sems));
  Shape gathered = block.shape;
  gathered[0] *= axis_size;
  PallasCall call = pallas_call(name, std::move(kernel), grid, {{gathered, block.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return call;
}

PallasCall AllGatherCall(const Mesh& mesh, const CollectiveProblem& problem,
                         const std::string& name,
                         const std::function<KernelFn(int64_t shard)>& kernel, int divisor,
                         const std::vector<std::string>& step_semaphores) {
  const int n = CheckCollectiveProblem(mesh, problem, divisor);
  const int64_t shard = static_cast<int64_t>(problem.bytes / SizeOf(problem.dtype)) / n;
  return AllGatherCallOf(name, n, {{shard}, problem.dtype}, kernel(shard), step_semaphores);
}

Bound RingAllGatherBound(const Mesh& mesh, const Params& params) {
  return RingAllGatherBoundFor(mesh, params.String("axis"), params.Bytes("bytes"));
}

Bound BidiAllGatherBound(const Mesh& mesh, const Params& params) {
  return BidiAllGatherBoundFor(mesh, params.String("axis"), params.Bytes("bytes"));
}

Bound RingAllGatherBoundFor(const Mesh& mesh, const std::string& axis, uint64_t bytes) {
  const AxisLinks a = LinksOf(mesh, axis);
  const double v = static_cast<double>(bytes);
  const double bandwidth = v / a.link_bytes_per_s * (a.size - 1) / a.size;
  const double latency = a.hop_latency_s * (a.size - 1);
  return {std::max(bandwidth, latency), "max(T_min (X-1), (V/W_oneway)(X-1)/X)"};
}

Bound BidiAllGatherBoundFor(const Mesh& mesh, const std::string& axis, uint64_t bytes) {
  const AxisLinks a = LinksOf(mesh, axis);
  if (!a.wraparound) {
    Bound b = RingAllGatherBoundFor(mesh, axis, bytes);
    b.formula += " (no wraparound)";
    return b;
  }
  // §3 gives V/W_ici for large X; every device must still receive (X-1)/X of V over its
  // two inbound links, so the exact bound carries that factor.
  const double w_ici = 2 * a.link_bytes_per_s;
  const double v = static_cast<double>(bytes);
  return {std::max(a.hop_latency_s * a.size / 2, v / w_ici * (a.size - 1) / a.size),
          "max(T_min X/2, (V/W_ici)(X-1)/X)"};
}

double AllGatherBusFactor(int axis_size) {
  return static_cast<double>(axis_size - 1) / axis_size;
}

}  // namespace tpusim::kernels
