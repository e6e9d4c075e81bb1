// What every lax collective shares: naming, the checks of OutputType, and the dispatch to
// each collective's kernel.

#include "kernels/lax/collectives.h"

#include <algorithm>
#include <set>

#include "base/errors.h"
#include "base/text.h"
#include "kernels/lax/calls.h"
#include "kernels/lax/plan.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

const char* OpName(const CollectiveSpec& spec) {
  switch (spec.kind) {
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kPsum:
      return spec.mean                           ? "pmean"
             : spec.reduction == Reduction::kMax ? "pmax"
             : spec.reduction == Reduction::kMin ? "pmin"
                                                 : "psum";
    case Collective::kPsumScatter:
      return "psum_scatter";
    case Collective::kPpermute:
      return "ppermute";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kBroadcast:
      return "collective_broadcast";
  }
  return "?";
}

[[noreturn]] void Fail(const CollectiveSpec& spec, const std::string& what) {
  throw Error(ErrorKind::kInvalidArgument, Describe(spec) + ": " + what);
}

std::string AxesList(const Mesh& mesh) {
  std::string s;
  for (const std::string& a : mesh.axis_names())
    s += (s.empty() ? "'" : ", '") + a + "'";
  return s;
}

// A dimension index in [-rank, rank) made non-negative; `what` names the argument.
int CheckDim(const CollectiveSpec& spec, int dim, int rank, const std::string& what,
             const ShapeDtype& x) {
  if (dim < -rank || dim >= rank) {
    Fail(spec, what + "=" + std::to_string(dim) + " is out of range for x of type " +
                   TypeString(x.dtype, x.shape) + ": it must be in [" + std::to_string(-rank) +
                   ", " + std::to_string(rank) + ").");
  }
  return dim < 0 ? dim + rank : dim;
}

// "'x' (4 devices)" or "each replica group (4 devices)"; "the size of 'x' (4)" or "the size of
// each replica group (4)".
std::string Over(const CollectiveSpec& spec, int n) {
  const std::string devices = " (" + std::to_string(n) + " devices)";
  return spec.groups.empty() ? "'" + spec.axes[0] + "'" + devices : "each replica group" + devices;
}

std::string SizeOf(const CollectiveSpec& spec, int n) {
  const std::string size = " (" + std::to_string(n) + ")";
  return spec.groups.empty() ? "the size of '" + spec.axes[0] + "'" + size
                             : "the size of each replica group" + size;
}

// Splitting dimension `dim` (of size `size`) over an axis of `n` devices.
void CheckSplit(const CollectiveSpec& spec, const std::string& what, int dim, int64_t size, int n,
                bool tiled) {
  const std::string where = what + "=" + std::to_string(dim) + " has size " + std::to_string(size);
  if (tiled && size % n != 0) {
    const int64_t lower = size / n * n;
    Fail(spec, where + ", which does not divide into " + std::to_string(n) + " equal tiles over " +
                   Over(spec, n) + ". Use a size that is a " + "multiple of " + std::to_string(n) +
                   " (e.g. " + std::to_string(lower > 0 ? lower : n) + " or " +
                   std::to_string(lower + n) + "), or pad x.");
  }
  if (!tiled && size != n) {
    Fail(spec, where + ", but without tiled=True it must equal " + SizeOf(spec, n) +
                   ". Pass tiled=True to split it into " + std::to_string(n) + " tiles instead.");
  }
}

void CheckPerm(const CollectiveSpec& spec, int n) {
  std::set<int> sources, destinations;
  for (const auto& [s, d] : spec.perm) {
    for (int i : {s, d}) {
      if (i < 0 || i >= n) {
        Fail(spec, "the pair (" + std::to_string(s) + ", " + std::to_string(d) + ") names index " +
                       std::to_string(i) + ", outside " +
                       (spec.groups.empty() ? "axis '" + spec.axes[0] + "'"
                                            : std::string("each replica group")) +
                       " (indices 0 to " + std::to_string(n - 1) + ").");
      }
    }
    if (!sources.insert(s).second) {
      Fail(spec, "perm is not a permutation: source " + std::to_string(s) +
                     " appears twice. Give each device at most one destination.");
    }
    if (!destinations.insert(d).second) {
      Fail(spec, "perm is not a permutation: destination " + std::to_string(d) +
                     " appears twice. Give each device at most one source.");
    }
  }
}

}  // namespace

std::string Describe(const CollectiveSpec& spec) {
  if (!spec.groups.empty()) {
    std::string d = OpName(spec);
    d += " over " + std::to_string(spec.groups.size()) +
         (spec.groups.size() == 1 ? " group of " : " groups of ") +
         std::to_string(spec.groups[0].size());
    return d;
  }
  std::string axes;
  for (const std::string& a : spec.axes)
    base::AppendListItem(axes, ", ", a);
  if (spec.axes.size() != 1) axes = "(" + axes + ")";
  return std::string(OpName(spec)) + " " + axes;
}

DeviceGroups GroupsOf(const Mesh& mesh, const CollectiveSpec& spec) {
  if (!spec.groups.empty()) return DeviceGroups::Explicit(mesh, spec.groups, Describe(spec));
  return DeviceGroups::OfAxes(mesh, spec.axes);
}

bool Implements(Collective kind, Algorithm algorithm) {
  switch (kind) {
    case Collective::kAllGather:
    case Collective::kPsum:
    case Collective::kBroadcast:
      return true;
    case Collective::kPsumScatter:
      return algorithm != Algorithm::kRecursiveDoubling;
    case Collective::kPpermute:
    case Collective::kAllToAll:
      return algorithm == Algorithm::kDirect;
  }
  return false;
}

int GroupSize(const Mesh& mesh, const CollectiveSpec& spec) {
  if (!spec.groups.empty()) return static_cast<int>(spec.groups[0].size());
  return mesh.AxisSize(spec.axes[0]);
}

CollectiveSpec Checked(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  CollectiveSpec c = spec;
  if (!spec.groups.empty() && !spec.axes.empty()) {
    Fail(spec, "both axis_name and replica groups are given; give one of them.");
  }
  if ((spec.reduction != Reduction::kSum || spec.mean) && spec.kind != Collective::kPsum) {
    Fail(spec, std::string("reduces with ") + (spec.mean ? "mean" : ReductionName(spec.reduction)) +
                   ", but only psum (pmax, pmin, pmean) takes another reduction than a sum.");
  }
  if (!spec.groups.empty()) {
    DeviceGroups::Explicit(mesh, spec.groups, Describe(spec));  // throws when they are not sound
  } else if (spec.axes.empty()) {
    Fail(spec, "no axis_name given. Name a mesh axis: one of " + AxesList(mesh) + ".");
  }
  std::set<std::string> seen;
  for (const std::string& a : spec.axes) {
    const auto& names = mesh.axis_names();
    if (std::find(names.begin(), names.end(), a) == names.end()) {
      Fail(spec, "axis name '" + a + "' is not in " + mesh.Describe() + "; use one of " +
                     AxesList(mesh) + ".");
    }
    if (!seen.insert(a).second) {
      Fail(spec, "axis name '" + a + "' is given twice; name each axis once.");
    }
  }
  if (spec.axes.size() > 1 && spec.kind != Collective::kPsum) {
    Fail(spec, std::string(OpName(spec)) +
                   " takes one axis name here; only psum reduces over several. Apply it once "
                   "per axis.");
  }
  if ((spec.kind == Collective::kPsum || spec.kind == Collective::kPsumScatter) &&
      x.dtype == DType::kInt8) {
    Fail(spec, "int8 partial sums would overflow; reduce in int32, bf16 or f32 (astype first).");
  }
  if (spec.mean && spec.reduction != Reduction::kSum) {
    Fail(spec, "a mean is a sum divided by the group size; it takes no other reduction.");
  }
  const int rank = static_cast<int>(x.shape.size());
  const int n = GroupSize(mesh, spec);
  switch (spec.kind) {
    case Collective::kAllGather:
      // Untiled all_gather inserts a dimension, so axis may also be rank.
      c.axis = CheckDim(spec, spec.axis, spec.tiled ? rank : rank + 1, "axis", x);
      break;
    case Collective::kPsum:
      break;
    case Collective::kPsumScatter:
      c.axis = CheckDim(spec, spec.axis, rank, "scatter_dimension", x);
      CheckSplit(spec, "scatter_dimension", c.axis, x.shape[c.axis], n, spec.tiled);
      break;
    case Collective::kPpermute:
      CheckPerm(spec, n);
      break;
    case Collective::kBroadcast:
      break;
    case Collective::kAllToAll:
      c.axis = CheckDim(spec, spec.axis, rank, "split_axis", x);
      c.concat_axis = CheckDim(spec, spec.concat_axis, rank, "concat_axis", x);
      CheckSplit(spec, "split_axis", c.axis, x.shape[c.axis], n, spec.tiled);
      break;
  }
  return c;
}

ShapeDtype OutputType(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  const CollectiveSpec c = Checked(mesh, spec, x);
  const int n = GroupSize(mesh, c);
  Shape shape = x.shape;
  switch (c.kind) {
    case Collective::kAllGather:
      if (c.tiled) {
        shape[c.axis] *= n;
      } else {
        shape.insert(shape.begin() + c.axis, n);
      }
      break;
    case Collective::kPsum:
      // jax.lax.pmean divides with true division: an integer mean is a float32.
      if (c.mean && (x.dtype == DType::kInt32 || x.dtype == DType::kInt8))
        return {shape, DType::kF32};
      break;
    case Collective::kPpermute:
    case Collective::kBroadcast:
      break;
    case Collective::kPsumScatter:
      if (c.tiled) {
        shape[c.axis] /= n;
      } else {
        shape.erase(shape.begin() + c.axis);
      }
      break;
    case Collective::kAllToAll:
      if (c.tiled) {
        shape[c.axis] /= n;
        shape[c.concat_axis] *= n;
      } else {
        // np.insert(np.delete(x.shape, split_axis), concat_axis, X), as jax.lax documents.
        shape.erase(shape.begin() + c.axis);
        shape.insert(shape.begin() + c.concat_axis, n);
      }
      break;
  }
  return {shape, x.dtype};
}

PallasCall MakeCall(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  const CollectiveSpec c = Checked(mesh, spec, x);
  return MakeCall(mesh, c, x, PlanCollective(mesh, c, x));
}

PallasCall MakeCall(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                    const CollectivePlan& plan) {
  const ShapeDtype out = OutputType(mesh, spec, x);
  const CollectiveSpec c = Checked(mesh, spec, x);
  PallasCall call;
  switch (c.kind) {
    case Collective::kAllGather:
      call = MakeAllGather(mesh, c, x, out, plan);
      break;
    case Collective::kPsum:
      call = MakePsum(mesh, c, x, out, plan);
      break;
    case Collective::kPsumScatter:
      call = MakePsumScatter(mesh, c, x, out, plan);
      break;
    case Collective::kPpermute:
      call = MakePpermute(mesh, c, x, plan);
      break;
    case Collective::kAllToAll:
      call = MakeAllToAll(mesh, c, x, out, plan);
      break;
    case Collective::kBroadcast:
      call = MakeBroadcast(mesh, c, x, plan);
      break;
  }
  call.kernel = Annotated(std::move(call.kernel), plan);
  call.name = Describe(c);
  call.xla_collective = true;
  // One collective_id per collective and set of groups: concurrent async collectives that
  // synchronise different groups never share a barrier semaphore (ids from 1000 up, clear
  // of the small ids hand-written kernels use). Replica groups are told apart by a hash of
  // their members (FNV-1a), from 1 << 20 up.
  int groups = 0;
  for (const std::string& a : c.axes)
    groups |= 1 << mesh.AxisIndex(a);
  if (!c.groups.empty()) {
    uint32_t hash = 2166136261u;
    for (const std::vector<int>& group : c.groups) {
      for (int device : group)
        hash = (hash ^ static_cast<uint32_t>(device + 1)) * 16777619u;
      hash = (hash ^ 0xffffffffu) * 16777619u;
    }
    groups = (1 << 20) + static_cast<int>(hash % (1u << 24)) * 4;
  }
  call.compiler_params.collective_id = 1000 + static_cast<int>(c.kind) * 256 + groups;
  call.in_names = {"x"};
  call.out_names = {"out"};
  return call;
}

}  // namespace tpusim::kernels::lax
