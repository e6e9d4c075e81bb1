// The two ar_vs_ag schedules (programs/ar_vs_ag.h says what and why).

#include <algorithm>
#include <string>

#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"
#include "programs/ar_vs_ag.h"
#include "programs/host_reference.h"
#include "programs/program_entry.h"

namespace tpusim::programs {
namespace {

using namespace dsl;
using kernels::Params;
using kernels::Workload;

constexpr const char* kFamily = "ar_vs_ag";

struct Problem {
  std::string axis;
  int x = 1;
  int64_t b = 0, d = 0, f = 0;
  int64_t dx() const { return d / x; }
};

Problem ProblemFor(const std::string& name, const Mesh& mesh, const Params& params) {
  Problem p;
  p.axis = params.String("axis");
  p.x = AxisSizeFor(name, mesh, p.axis);
  p.b = params.Int("m");
  p.d = params.Int("k");
  p.f = params.Int("n");
  CheckDivides(name, "k", "D", p.d, p.x, p.axis);
  return p;
}

// y = x @ W rounded once; the all-reduce's X partials are rounded to bf16 before the sum
// (one ulp each, plus one of the result), the all-gather's dot rounds once.
Workload MakeWorkload(const Problem& p, const Params& params, ShardMap program, bool partials) {
  Workload w{std::move(program), MatmulOperands(p.b, p.d, p.f, params.seed, params.functional), {}};
  w.out_types = {{{p.b, p.f}, DType::kBF16}};  // so compare knows the contract without a reference
  if (!params.functional) return w;
  const ChunkedProduct y = SumOfKChunks(w.inputs[0], w.inputs[1], p.x);
  w.expected = {FromHost(y.sum, DType::kBF16)};
  w.atol = Ulp(DType::kBF16) * (MaxAbs(y.sum) + (partials ? p.x * y.partial_max : 0.0));
  return w;
}

Workload AllReduce(const Mesh& mesh, const Params& params) {
  const std::string name = "ar_vs_ag/allreduce";
  const Problem p = ProblemFor(name, mesh, params);
  auto body = [p](ProgramContext& ctx, const std::vector<Value>& in) {
    Value chunk = ctx.dynamic_slice(in[0], {0, ctx.axis_index(p.axis) * p.dx()}, {p.b, p.dx()});
    return std::vector<Value>{ctx.psum(ctx.dot(chunk, in[1]), p.axis)};
  };
  return MakeWorkload(p, params, shard_map(mesh, {P{}, P{p.axis, nullptr}}, {P{}}, body, name),
                      true);
}

Workload AllGather(const Mesh& mesh, const Params& params) {
  const std::string name = "ar_vs_ag/allgather";
  const Problem p = ProblemFor(name, mesh, params);
  auto body = [p](ProgramContext& ctx, const std::vector<Value>& in) {
    Value weights = ctx.all_gather(in[1], p.axis, /*axis=*/0, /*tiled=*/true);
    return std::vector<Value>{ctx.dot(in[0], weights)};
  };
  return MakeWorkload(p, params, shard_map(mesh, {P{}, P{p.axis, nullptr}}, {P{}}, body, name),
                      false);
}

// docs/references.md §4 (overlapped, so a lower bound for these blocking schedules):
// all-gather T = max(2BDF/C, V_W/W), all-reduce T = max(2BDF/(XC), 2 V_y/W), with the
// collective's (X-1)/X and W = W_ici (both directions) with wraparound, else W_oneway
// (docs/references.md §3).
kernels::Bound MakeBound(const Mesh& mesh, const Params& params, bool all_reduce) {
  const Problem p =
      ProblemFor(all_reduce ? "ar_vs_ag/allreduce" : "ar_vs_ag/allgather", mesh, params);
  if (all_reduce) {
    return ComputeOrLinkBound(mesh, 2.0 * p.b * p.d * p.f / p.x,
                              LinkSeconds(mesh, p.axis, 2 * (2.0 * p.b * p.f)),
                              "max(2BDF/(X C), 2 (2BF bytes)(X-1)/X / W)");
  }
  return ComputeOrLinkBound(mesh, 2.0 * p.b * p.d * p.f, LinkSeconds(mesh, p.axis, 2.0 * p.d * p.f),
                            "max(2BDF/C, (2DF bytes)(X-1)/X / W)");
}

kernels::KernelInfo Info(const std::string& schedule, const std::string& summary, MakeFn make,
                         bool all_reduce) {
  return ProgramEntry(
      kFamily, schedule, summary,
      {kernels::AxisParam().Description("the mesh axis W's rows are sharded over"),
       kernels::MParam().Description("B, the batch: rows of x and of y"),
       kernels::KParam().Description("D: columns of x, rows of W").Default(kArVsAgD),
       kernels::NParam().Description("F: columns of W and of y").Default(kArVsAgF)},
      std::move(make), [all_reduce](const Mesh& mesh, const Params& params) {
        return MakeBound(mesh, params, all_reduce);
      });
}

const kernels::Registration all_reduce(
    Info("allreduce", "y = x @ W, W sharded on K: dot the local shards, psum the partials (m = B)",
         AllReduce, true));
const kernels::Registration all_gather(Info(
    "allgather", "y = x @ W, W sharded on K: all_gather W, then dot (m = B)", AllGather, false));

}  // namespace
}  // namespace tpusim::programs
