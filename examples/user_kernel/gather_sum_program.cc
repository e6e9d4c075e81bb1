// A user's program, outside the tpusim tree: a shard_map body that mixes an array op, the
// user's own pallas_call and a lax collective, registered like a kernel so that
// `tpusim run|compare|bench` and user_kernel_demo run it by name.
//
//   y = relu(x)                                   x: P(axis), this device's shard
//   gathered = all_gather_ring_left_chunked(y)    the user's kernel: every shard, everywhere
//   total = lax.psum(y, axis)                     the shards summed elementwise

#include <algorithm>
#include <vector>

#include "all_gather_ring_left_chunked.h"
#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/all_gather.h"
#include "kernels/reduce_scatter.h"

namespace user_kernel {
namespace {

using namespace tpusim::dsl;
using tpusim::kernels::Bound;
using tpusim::kernels::CollectiveProblem;
using tpusim::kernels::Params;
using tpusim::kernels::Workload;

// The reference: relu on the host, the gathered array, and the sum of its X shards rounded
// once to the dtype.
void AddExpected(Workload& w, int devices) {
  const Array& x = w.inputs[0];
  Array relu(x.shape(), x.dtype());
  for (int64_t i = 0; i < x.size(); ++i)
    relu.SetFlat(i, std::max(x.GetFlat(i), 0.0));
  const int64_t shard = x.size() / devices;
  Array total({shard}, x.dtype());
  for (int64_t i = 0; i < shard; ++i) {
    double sum = 0;
    for (int d = 0; d < devices; ++d)
      sum += relu.GetFlat(d * shard + i);
    total.SetFlat(i, sum);
  }
  w.expected = {relu, total};
  w.atol = tpusim::kernels::ReductionTolerance(x.dtype(), devices);
}

Workload Make(const Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = tpusim::kernels::CollectiveProblemOf(params);
  const PallasCall gather = LeftRingChunkedAllGatherCall(mesh, problem, params.Int("chunks"));
  const std::string axis = problem.axis;
  Workload w{shard_map(
                 mesh, {P{axis}}, {P{}, P{}},
                 [gather, axis](ProgramContext& ctx, const std::vector<Value>& in) {
                   const Value y = ctx.relu(in[0]);
                   return std::vector<Value>{ctx.pallas_call(gather, {y}).at(0), ctx.psum(y, axis)};
                 },
                 "gather_sum"),
             {tpusim::kernels::MakeCollectiveInput(problem)},
             {}};
  if (problem.functional) AddExpected(w, mesh.AxisSize(axis));
  return w;
}

// The two collectives run one after the other: the user's one-way ring gathers V, then
// lax.psum (a bidirectional ring reduce-scatter and all-gather) sums a shard of V/X.
Bound GatherThenSum(const Mesh& mesh, const Params& params) {
  const std::string& axis = params.String("axis");
  const uint64_t bytes = params.Bytes("bytes");
  const uint64_t shard = bytes / static_cast<uint64_t>(mesh.AxisSize(axis));
  const Bound gather = tpusim::kernels::RingAllGatherBoundFor(mesh, axis, bytes);
  // A reduce-scatter takes an all-gather's time (docs/references.md §3).
  const Bound sum = tpusim::kernels::BidiAllGatherBoundFor(mesh, axis, shard);
  return {gather.seconds + 2 * sum.seconds,
          "T(ring all-gather of V) + 2 T(bidirectional reduce-scatter of V/X)"};
}

// The program takes what its steps take: the collective's axis, bytes and dtype (the
// reductions' dtypes, for the psum), and the user kernel's chunks (declared once, in
// all_gather_ring_left_chunked.cc).
tpusim::kernels::KernelInfo GatherSum() {
  tpusim::kernels::KernelInfo info{
      "gather_sum",
      "user example program: relu, the user's ring all-gather, then lax.psum",
      tpusim::kernels::ParamList(tpusim::kernels::ReductionParams(), ChunksParam()),
      Make,
      GatherThenSum,
      tpusim::kernels::AllGatherBusFactor};
  info.kind = tpusim::kernels::EntryKind::kProgram;  // `tpusim list` shows it with the programs
  return info;
}

const tpusim::kernels::Registration registration(GatherSum());

}  // namespace
}  // namespace user_kernel
