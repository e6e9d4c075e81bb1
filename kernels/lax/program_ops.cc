// The lax collectives as program ops (dsl/program/op_registry.h), registered by name from
// here so dsl/ does not depend on kernels/. Each op's shape function is the collective's
// OutputType and its run function runs the collective's pallas_call (MakeCall) on this
// device's core, with the operand and result values as its HBM operands.

#include "dsl/program/context.h"
#include "dsl/program/op_registry.h"
#include "kernels/lax/collectives.h"

namespace tpusim::kernels::lax {
namespace {

using dsl::Attr;
using dsl::Attributes;
using dsl::AttrType;

CollectiveSpec SpecOf(Collective kind, Reduction reduction, const Attributes& a) {
  CollectiveSpec spec{kind, {}, 0, 0, false, {}};
  spec.reduction = reduction;
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
  return spec;
}

dsl::AttrSpec ReplicaGroups() {
  return {"replica_groups", AttrType::kIntLists, std::nullopt,
          "instead of axis_name: groups of logical device ids, each a ring in the order listed, "
          "covering every device once (XLA's replica_groups)",
          true};
}

dsl::OpDef CollectiveOp(const std::string& name, Collective kind, const std::string& summary,
                        std::vector<dsl::AttrSpec> attributes,
                        Reduction reduction = Reduction::kSum) {
  dsl::OpDef def;
  def.name = name;
  def.summary = summary;
  def.attributes = std::move(attributes);
  def.attributes.push_back(ReplicaGroups());
  def.collective = true;
  def.shape = [kind, reduction](const dsl::OpTyping& t) {
    return std::vector<dsl::ShapeDtype>{
        OutputType(t.mesh, SpecOf(kind, reduction, t.attrs), t.operands[0])};
  };
  def.run = [kind, reduction](dsl::OpRun& r) {
    const CollectiveSpec spec = SpecOf(kind, reduction, r.attrs);
    r.ctx.RunPallasCall(MakeCall(r.ctx.mesh(), spec, r.operands[0].type()), r.operands, r.results);
  };
  def.describe = [kind, reduction](const Attributes& a) {
    return Describe(SpecOf(kind, reduction, a));
  };
  return def;
}

dsl::AttrSpec AxisName() {
  return {"axis_name", AttrType::kString, std::nullopt,
          "the mesh axis to communicate over (or give replica_groups)", true};
}
dsl::AttrSpec AxisNames(const std::string& what) {
  return {"axis_name", AttrType::kStrings, std::nullopt,
          "the mesh axis or axes to " + what + " over (or give replica_groups)", true};
}
dsl::AttrSpec Tiled() {
  return {"tiled", AttrType::kBool, Attr(false),
          "concatenate/split the dimension instead of adding/removing one"};
}

const dsl::OpRegistration all_gather_op(CollectiveOp(
    "all_gather", Collective::kAllGather, "every device's x along `axis` (lax.all_gather)",
    {AxisName(), {"axis", AttrType::kInt, Attr(0), "where the gathered dimension goes"}, Tiled()}));
const dsl::OpRegistration psum_op(CollectiveOp("psum", Collective::kPsum,
                                               "the sum of x over the named axes (lax.psum)",
                                               {AxisNames("sum")}));
const dsl::OpRegistration pmax_op(CollectiveOp("pmax", Collective::kPsum,
                                               "the maximum of x over the named axes (lax.pmax)",
                                               {AxisNames("take the maximum")}, Reduction::kMax));
const dsl::OpRegistration pmin_op(CollectiveOp("pmin", Collective::kPsum,
                                               "the minimum of x over the named axes (lax.pmin)",
                                               {AxisNames("take the minimum")}, Reduction::kMin));
const dsl::OpRegistration psum_scatter_op(CollectiveOp(
    "psum_scatter", Collective::kPsumScatter,
    "the sum of x over the axis, each device keeping its block (lax.psum_scatter)",
    {AxisName(),
     {"scatter_dimension", AttrType::kInt, Attr(0), "the dimension split between devices"},
     Tiled()}));
const dsl::OpRegistration ppermute_op(CollectiveOp(
    "ppermute", Collective::kPpermute, "x sent along (source, destination) pairs (lax.ppermute)",
    {AxisName(),
     {"perm", AttrType::kIntPairs, std::nullopt, "(source, destination) axis indices"}}));
const dsl::OpRegistration all_to_all_op(
    CollectiveOp("all_to_all", Collective::kAllToAll,
                 "x split along split_axis, chunk j sent to device j, joined along concat_axis "
                 "(lax.all_to_all)",
                 {AxisName(),
                  {"split_axis", AttrType::kInt, std::nullopt, "the dimension to split"},
                  {"concat_axis", AttrType::kInt, std::nullopt, "the dimension to join along"},
                  Tiled()}));

}  // namespace
}  // namespace tpusim::kernels::lax
