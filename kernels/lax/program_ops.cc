// The lax collectives as program ops (dsl/program/op_registry.h), registered by name from
// here so dsl/ does not depend on kernels/. Each op's shape function is the collective's
// OutputType and its run function runs the collective's pallas_call (MakeCall) on this
// device's core, with the operand and result values as its HBM operands, and adds the call
// to the run's collective records (the algorithm, and where its time went).
//
// Which algorithm runs: the op's `algorithm` attribute when given (an algorithm the
// collective does not implement is an error); else the run's collective_algorithm when the
// collective implements it; else the planner's choice (kernels/lax/plan.h).

#include "base/errors.h"
#include "dsl/program/context.h"
#include "dsl/program/op_registry.h"
#include "dsl/program/runtime.h"
#include "kernels/lax/calls.h"
#include "kernels/lax/collectives.h"

namespace tpusim::kernels::lax {
namespace {

using dsl::Attr;
using dsl::Attributes;
using dsl::AttrType;

// The algorithm called `name`, or an error naming `what` and the known names.
Algorithm Named(const std::string& name, const std::string& what) {
  if (auto a = AlgorithmNamed(name)) return *a;
  throw Error(ErrorKind::kInvalidArgument, what + ": there is no collective algorithm '" + name +
                                               "'; use one of " + AlgorithmNameList() + ".");
}

CollectiveSpec SpecOf(Collective kind, Reduction reduction, bool mean, const Attributes& a) {
  CollectiveSpec spec{kind, {}, 0, 0, false, {}};
  spec.reduction = reduction;
  spec.mean = mean;
  if (auto it = a.find("axis_name"); it != a.end()) {
    const Attr& axis_name = it->second;
    spec.axes = axis_name.type() == AttrType::kStrings
                    ? axis_name.AsStrings()
                    : std::vector<std::string>{axis_name.AsString()};
  }
  if (auto it = a.find("replica_groups"); it != a.end()) {
    for (const std::vector<int64_t>& group : it->second.AsIntLists())
      spec.groups.emplace_back(group.begin(), group.end());
  }
  auto get_int = [&](const char* name, int& out) {
    if (auto it = a.find(name); it != a.end()) out = static_cast<int>(it->second.AsInt());
  };
  get_int("axis", spec.axis);
  get_int("scatter_dimension", spec.axis);
  get_int("split_axis", spec.axis);
  get_int("concat_axis", spec.concat_axis);
  if (auto it = a.find("tiled"); it != a.end()) spec.tiled = it->second.AsBool();
  if (auto it = a.find("perm"); it != a.end()) {
    for (const auto& [source, destination] : it->second.AsIntPairs())
      spec.perm.emplace_back(static_cast<int>(source), static_cast<int>(destination));
  }
  if (auto it = a.find("algorithm"); it != a.end())
    spec.algorithm = Named(it->second.AsString(), Describe(spec));
  return spec;
}

// The spec a call runs: the run's algorithm applies where the op names none and the
// collective implements it.
CollectiveSpec RunSpec(Collective kind, Reduction reduction, bool mean, const Attributes& a,
                       const std::string& run_algorithm) {
  CollectiveSpec spec = SpecOf(kind, reduction, mean, a);
  if (!spec.algorithm && !run_algorithm.empty()) {
    const Algorithm algorithm = Named(run_algorithm, "the run's collective algorithm");
    if (Implements(kind, algorithm)) spec.algorithm = algorithm;
  }
  return spec;
}

dsl::AttrSpec ReplicaGroups() {
  return dsl::AttrSpec::Of(
      base::Param::IntLists(
          "replica_groups",
          "instead of axis_name: groups of logical device ids, each a ring in the order listed, "
          "covering every device once (XLA's replica_groups)")
          .Auto("axis_name's devices"));
}

dsl::AttrSpec AlgorithmAttr() {
  return dsl::AttrSpec::Of(
      base::Param::String("algorithm",
                          "the algorithm to run: " + AlgorithmNameList() +
                              " (default: the fastest by the cost estimate, or the run's choice)")
          .Auto("the fastest by the cost estimate, or the run's choice"));
}

dsl::OpDef CollectiveOp(const std::string& name, Collective kind, const std::string& summary,
                        std::vector<dsl::AttrSpec> attributes,
                        Reduction reduction = Reduction::kSum, bool mean = false) {
  dsl::OpDef def;
  def.name = name;
  def.summary = summary;
  def.attributes = std::move(attributes);
  def.attributes.push_back(ReplicaGroups());
  def.attributes.push_back(AlgorithmAttr());
  def.collective = true;
  def.shape = [kind, reduction, mean](const dsl::OpTyping& t) {
    return std::vector<dsl::ShapeDtype>{
        OutputType(t.mesh, SpecOf(kind, reduction, mean, t.attrs), t.operands[0])};
  };
  def.run = [name, kind, reduction, mean](dsl::OpRun& r) {
    const dsl::Mesh& mesh = r.ctx.mesh();
    const dsl::ShapeDtype x = r.operands[0].type();
    const CollectiveSpec spec =
        Checked(mesh, RunSpec(kind, reduction, mean, r.attrs, r.ctx.collective_algorithm()), x);
    const CollectivePlan plan = PlanCollective(mesh, spec, x);
    const base::Picoseconds begin = r.ctx.port().Now();
    r.ctx.RunPallasCall(MakeCall(mesh, spec, x, plan), r.operands, r.results);
    dsl::CollectiveRecord record;
    record.op = name;
    record.algorithm = plan.Describe();
    record.forced = plan.forced;
    record.bytes = static_cast<uint64_t>(dsl::NumElements(x.shape)) * dsl::SizeOf(x.dtype);
    record.latency_s = plan.cost.latency_s;
    record.bandwidth_s = plan.cost.bandwidth_s;
    record.busiest_link_bytes = plan.cost.busiest_link_bytes;
    record.total = r.ctx.port().Now() - begin;
    r.ctx.NoteCollective(record);
  };
  def.describe = [kind, reduction, mean](const Attributes& a) {
    return Describe(SpecOf(kind, reduction, mean, a));
  };
  return def;
}

dsl::AttrSpec AxisName() {
  return dsl::AttrSpec::Of(
      base::Param::String("axis_name", "the mesh axis to communicate over (or give replica_groups)")
          .Auto("replica_groups instead"));
}
dsl::AttrSpec AxisNames(const std::string& what) {
  return dsl::AttrSpec::Of(base::Param::Strings("axis_name", "the mesh axis or axes to " + what +
                                                                 " over (or give replica_groups)")
                               .Auto("replica_groups instead"));
}
dsl::AttrSpec Tiled() {
  return dsl::AttrSpec::Of(
      base::Param::Bool("tiled", "concatenate/split the dimension instead of adding/removing one")
          .Default(false));
}

// Made when the program-op registry is built (dsl/program/op_registry.h), not before main.
const dsl::OpRegistration all_gather_op(+[] {
  return CollectiveOp(
      "all_gather", Collective::kAllGather, "every device's x along `axis` (lax.all_gather)",
      {AxisName(),
       dsl::AttrSpec::Of(base::Param::Int("axis", "where the gathered dimension goes").Default(0)),
       Tiled()});
});
const dsl::OpRegistration psum_op(+[] {
  return CollectiveOp("psum", Collective::kPsum, "the sum of x over the named axes (lax.psum)",
                      {AxisNames("sum")});
});
const dsl::OpRegistration pmax_op(+[] {
  return CollectiveOp("pmax", Collective::kPsum, "the maximum of x over the named axes (lax.pmax)",
                      {AxisNames("take the maximum")}, Reduction::kMax);
});
const dsl::OpRegistration pmin_op(+[] {
  return CollectiveOp("pmin", Collective::kPsum, "the minimum of x over the named axes (lax.pmin)",
                      {AxisNames("take the minimum")}, Reduction::kMin);
});
const dsl::OpRegistration pmean_op(+[] {
  return CollectiveOp("pmean", Collective::kPsum, "the mean of x over the named axes (lax.pmean)",
                      {AxisNames("average")}, Reduction::kSum, true);
});
const dsl::OpRegistration psum_scatter_op(+[] {
  return CollectiveOp(
      "psum_scatter", Collective::kPsumScatter,
      "the sum of x over the axis, each device keeping its block (lax.psum_scatter)",
      {AxisName(),
       dsl::AttrSpec::Of(
           base::Param::Int("scatter_dimension", "the dimension split between devices").Default(0)),
       Tiled()});
});
const dsl::OpRegistration ppermute_op(+[] {
  return CollectiveOp(
      "ppermute", Collective::kPpermute, "x sent along (source, destination) pairs (lax.ppermute)",
      {AxisName(),
       dsl::AttrSpec::Of(base::Param::IntPairs("perm", "(source, destination) axis indices"))});
});
const dsl::OpRegistration all_to_all_op(+[] {
  return CollectiveOp(
      "all_to_all", Collective::kAllToAll,
      "x split along split_axis, chunk j sent to device j, joined along concat_axis "
      "(lax.all_to_all)",
      {AxisName(), dsl::AttrSpec::Of(base::Param::Int("split_axis", "the dimension to split")),
       dsl::AttrSpec::Of(base::Param::Int("concat_axis", "the dimension to join along")), Tiled()});
});
const dsl::OpRegistration collective_broadcast_op(+[] {
  return CollectiveOp(
      "collective_broadcast", Collective::kBroadcast,
      "the x of the first device of each group (or of the axis), on every device of it (XLA's "
      "collective-broadcast)",
      {AxisName()});
});

}  // namespace
}  // namespace tpusim::kernels::lax
