// lax: one lax collective per program, over one mesh axis, sized by V (the parameter bytes),
// so that `bench --sweep bytes=...` shows which algorithm each size gets and what it costs,
// and `--collective-algorithm` compares the algorithms at one size:
//   lax/all_gather:   x P(axis) -> all_gather(x, axis, tiled) P(): V is the gathered array;
//   lax/psum:         each device's V bytes, summed over the axis, P();
//   lax/pmean:        the same averaged;
//   lax/psum_scatter: each device's V bytes, summed, each device keeping its 1/X, P(axis);
//   lax/all_to_all:   each device's V bytes in X blocks, block j to device j, P(axis);
//   lax/ppermute:     each device's V bytes to its right neighbour (the last to the first).
// The data check is kernels/lax's host reference, assembled as the out spec says.

#include <string>
#include <utility>
#include <vector>

#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/lax/collectives.h"
#include "kernels/problem_params.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "programs/host_reference.h"
#include "programs/program_entry.h"

namespace tpusim::programs {
namespace {

using namespace dsl;
using kernels::Params;
using kernels::Workload;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;

constexpr const char* kFamily = "lax";

struct Entry {
  const char* schedule;
  Collective kind;
  bool mean = false;
  const char* summary;
};

// The collective and the per-device shape it takes, for V = problem.bytes over X devices.
struct Problem {
  CollectiveSpec spec;
  std::string name;
  int x = 1;
  int64_t elements = 0;  // per device
  kernels::CollectiveProblem collective;
};

Problem ProblemFor(const Entry& e, const Mesh& mesh, const Params& params) {
  Problem p;
  p.name = std::string(kFamily) + "/" + e.schedule;
  p.collective = kernels::CollectiveProblemOf(params);
  const bool gathered = e.kind == Collective::kAllGather;
  // all_gather's V is X shards; the others' V is each device's operand (cut into X blocks by
  // psum_scatter and all_to_all): either way V splits into X whole-element parts.
  p.x = kernels::CheckCollectiveProblem(mesh, p.collective);
  const int64_t total = static_cast<int64_t>(p.collective.bytes / SizeOf(p.collective.dtype));
  p.elements = gathered ? total / p.x : total;
  p.spec = CollectiveSpec{e.kind, {p.collective.axis}};
  p.spec.mean = e.mean;
  p.spec.tiled = true;
  if (e.kind == Collective::kPpermute) {
    for (int i = 0; i < p.x; ++i)
      p.spec.perm.emplace_back(i, (i + 1) % p.x);
  }
  return p;
}

bool ReplicatedOut(Collective kind) {
  return kind == Collective::kAllGather || kind == Collective::kPsum;
}

// The global output from kernels/lax's per-device reference: device 0's block when the
// output is replicated, else the blocks of the devices along the axis (others at 0), in order.
Array AssembleExpected(const Mesh& mesh, const Problem& p, const std::vector<Array>& per_device) {
  if (ReplicatedOut(p.spec.kind)) return per_device[0];
  const int a = mesh.AxisIndex(p.collective.axis);
  const int64_t block = per_device[0].size();
  Array out({block * p.x}, per_device[0].dtype());
  for (int i = 0; i < p.x; ++i) {
    std::vector<int> coords(mesh.shape().size(), 0);
    coords[a] = i;
    out.Place(per_device[mesh.DeviceAt(coords)], {i * block});
  }
  return out;
}

Workload Make(const Entry& e, const Mesh& mesh, const Params& params) {
  const Problem p = ProblemFor(e, mesh, params);
  const P split{p.collective.axis};
  auto body = [p](ProgramContext& ctx, const std::vector<Value>& in) {
    std::vector<Value> out;
    const std::string& axis = p.spec.axes[0];
    switch (p.spec.kind) {
      case Collective::kAllGather:
        return std::vector<Value>{ctx.all_gather(in[0], axis, 0, true)};
      case Collective::kPsum:
        return ctx.Call(p.spec.mean ? "pmean" : "psum", {in[0]}, {{"axis_name", axis}});
      case Collective::kPsumScatter:
        return std::vector<Value>{ctx.psum_scatter(in[0], axis, 0, true)};
      case Collective::kAllToAll:
        return std::vector<Value>{ctx.all_to_all(in[0], axis, 0, 0, true)};
      case Collective::kPpermute: {
        IntPairs perm;
        for (const auto& [source, destination] : p.spec.perm)
          perm.emplace_back(source, destination);
        return std::vector<Value>{ctx.ppermute(in[0], axis, perm)};
      }
      case Collective::kBroadcast:  // no entry of kEntries runs it
        break;
    }
    return out;
  };
  const ShapeDtype x{{p.elements}, p.collective.dtype};
  const ShapeDtype out = kernels::lax::OutputType(mesh, p.spec, x);
  Workload w{shard_map(mesh, {split}, {ReplicatedOut(e.kind) ? P{} : split}, body, p.name), {}, {}};
  // Device d of the axis holds elements [d n, (d + 1) n) of the global input.
  kernels::CollectiveProblem global = p.collective;
  global.bytes = static_cast<uint64_t>(p.elements * p.x) * SizeOf(p.collective.dtype);
  w.inputs = {kernels::MakeCollectiveInput(global)};
  const int64_t out_elements = NumElements(out.shape) * (ReplicatedOut(e.kind) ? 1 : p.x);
  w.out_types = {{{out_elements}, out.dtype}};
  if (e.kind == Collective::kPsum || e.kind == Collective::kPsumScatter)
    w.atol = kernels::ReductionTolerance(p.collective.dtype, p.x);
  if (!p.collective.functional) return w;
  const int a = mesh.AxisIndex(p.collective.axis);
  std::vector<Array> shards;
  for (int d = 0; d < mesh.devices(); ++d)
    shards.push_back(w.inputs[0].Slice({mesh.CoordsOf(d)[a] * p.elements}, {p.elements}));
  w.expected = {AssembleExpected(mesh, p, kernels::lax::Reference(mesh, p.spec, shards))};
  return w;
}

kernels::Bound BoundFor(const Entry& e, const Mesh& mesh, const Params& params) {
  const Problem p = ProblemFor(e, mesh, params);
  const double v = static_cast<double>(p.collective.bytes);
  const kernels::AxisLinks links = kernels::LinksOf(mesh, p.collective.axis);
  switch (e.kind) {
    case Collective::kAllGather:
    case Collective::kPsumScatter:
      return ComputeOrLinkBound(mesh, 0, LinkSeconds(mesh, p.collective.axis, v),
                                "V (X-1)/X / W (W: both link directions with wraparound)");
    case Collective::kPsum:
      return ComputeOrLinkBound(mesh, 0, 2 * LinkSeconds(mesh, p.collective.axis, v),
                                "2 V (X-1)/X / W (W: both link directions with wraparound)");
    case Collective::kAllToAll:  // §3's V is the whole array: X devices' V here
      return ComputeOrLinkBound(
          mesh, 0, v * p.x / (4 * links.link_bytes_per_s * (links.wraparound ? 2 : 1)),
          "X V / (4 W) (W: both link directions with wraparound), docs/references.md §3");
    case Collective::kPpermute:
      return ComputeOrLinkBound(mesh, 0, v / links.link_bytes_per_s + links.hop_latency_s,
                                "T_min + V / W_oneway");
    case Collective::kBroadcast:  // no entry of kEntries runs it
      break;
  }
  return {};
}

const Entry kEntries[] = {
    {"all_gather", Collective::kAllGather, false, "all_gather(x, axis, tiled=True): V gathered"},
    {"psum", Collective::kPsum, false, "psum(x, axis): each device's V bytes summed"},
    {"pmean", Collective::kPsum, true, "pmean(x, axis): each device's V bytes averaged"},
    {"psum_scatter", Collective::kPsumScatter, false,
     "psum_scatter(x, axis, tiled=True): V summed, 1/X kept"},
    {"all_to_all", Collective::kAllToAll, false, "all_to_all(x, axis, 0, 0, tiled=True)"},
    {"ppermute", Collective::kPpermute, false, "ppermute(x, axis): V to the right neighbour"},
};

struct Registrations {
  Registrations() {
    for (const Entry& e : kEntries) {
      const bool sums = e.kind == Collective::kPsum || e.kind == Collective::kPsumScatter;
      kernels::KernelInfo info = ProgramEntry(
          kFamily, e.schedule, e.summary,
          sums ? kernels::ReductionParams() : kernels::CollectiveParams(),
          [e](const Mesh& mesh, const Params& params) { return Make(e, mesh, params); },
          [e](const Mesh& mesh, const Params& params) { return BoundFor(e, mesh, params); });
      const Collective kind = e.kind;
      info.bus_factor = [kind](int x) {
        if (kind == Collective::kPpermute) return 1.0;
        const double f = static_cast<double>(x - 1) / x;
        return kind == Collective::kPsum ? 2 * f : f;
      };
      kernels::Registry::Get().Add(std::move(info));
    }
  }
};
const Registrations registrations;

}  // namespace
}  // namespace tpusim::programs
