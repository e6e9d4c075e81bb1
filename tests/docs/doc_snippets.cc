#include "tests/docs/doc_snippets.h"

#include <string>

#include "base/errors.h"
#include "dsl/program/context.h"
#include "examples/first_kernel/ring_all_gather.h"
#include "kernels/all_gather.h"
#include "kernels/problem_params.h"  // the shared ones: axis, bytes, dtype, m, k, n, bm...
#include "kernels/registry.h"

namespace tpusim::docs {
namespace {

using namespace kernels;
using namespace dsl;

Workload Make(const dsl::Mesh& mesh, const Params& params);

const Registration registration(KernelInfo{
    "my_ring", "a ring all-gather cut into chunks",
    ParamList(
        CollectiveParams(),  // axis (default "x"), bytes (required), dtype
        Param::Int("chunks", "DMAs each step's shard is cut into")
            .Unit("DMAs")
            .Default(2)
            .Range(1, 64),
        Param::Enum("direction", {"right", "left"}, "where each device sends").Default("right")),
    Make, RingAllGatherBound, AllGatherBusFactor});

Workload Make(const dsl::Mesh& mesh, const Params& params) {
  const CollectiveProblem problem = CollectiveProblemOf(params);  // axis, bytes, dtype
  const int64_t chunks = params.Int("chunks");
  const bool left = params.String("direction") == "left";
  // The document is about declaring parameters: the kernel is README.md's first one, which
  // sends right in one DMA per step, and the run says what it did with the other two.
  Workload w =
      AllGatherWorkload(mesh, problem, AllGatherCall(mesh, problem, "my_ring", [&](int64_t shard) {
                          return examples::RingAllGather(problem.axis, shard);
                        }));
  w.notes.push_back("chunks " + std::to_string(chunks) + ", direction " +
                    (left ? "left" : "right") + ": declared, not used");
  return w;
}

}  // namespace

KernelFn BindOperands() {
  return [](Kernel& k, const Refs&) {
    const Ref& x = k.ref("x");                                   // one, by name
    auto [out, sem] = k.refs("out", "local_sem");                // several, by name
    auto [x2, out2, local_sem, sends, recvs] = k.operands<5>();  // all, in call order
    struct Operands {
      Ref x, out, local_sem, send_sems, recv_sems;
    };
    const auto r = k.operands<Operands>();  // all, into a struct of Refs
    const bool same =
        x.Describe() == x2.Describe() && x.Describe() == r.x.Describe() &&
        out.Describe() == out2.Describe() && out.Describe() == r.out.Describe() &&
        sem.Describe() == local_sem.Describe() && sem.Describe() == r.local_sem.Describe() &&
        sends.Describe() == r.send_sems.Describe() && recvs.Describe() == r.recv_sems.Describe() &&
        x.Describe() == "x" && recvs.Describe() == "recv_sems";
    if (!same) throw Error(ErrorKind::kKernelMisuse, "the ways of binding operands disagree");
  };
}

ShardMap DocProgram(const Mesh& mesh) {
  dsl::ShardMap program = dsl::shard_map(
      mesh, {P{"x", "y"}, P{"x", nullptr}}, {P{"x", nullptr}},
      [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
        Value w = ctx.all_gather(in[1], "x", /*axis=*/0, /*tiled=*/true);
        Value rows = ctx.dynamic_slice(w, {ctx.axis_index("y") * 1024, 0}, {1024, 1024});
        return {ctx.psum(ctx.dot(in[0], rows), "y")};
      });
  return program;
}

}  // namespace tpusim::docs
