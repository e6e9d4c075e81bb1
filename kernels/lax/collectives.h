#pragma once

// JAX's lax collectives (all_gather, psum, pmax, pmin, psum_scatter, ppermute, all_to_all)
// as Pallas kernels on the model, so their time comes from the same links, contention and
// latency as a hand-written kernel. Semantics and argument names follow jax.lax. A
// collective runs over named mesh axes, or (XLA's collectives) over explicit replica groups
// of devices: each group is a ring in the order it lists its devices, and a group that is
// not one mesh axis routes over several hops, as on hardware (kernels/lax/groups.h).
//
// Algorithms, per named mesh axis or replica group (docs/references.md §3):
// - all_gather: bidirectional ring. Each shard is cut in two along its first dimension of
//   size >= 2; one half travels right round the ring and the other left, HBM to HBM, so
//   both directions of every link carry data: T ~ (V/W_ici)(X-1)/X with wraparound. The
//   same algorithm runs on an axis without wraparound (the long way round the ring is then
//   routed over X-1 links, and the time approaches the one-direction figure).
// - psum_scatter: bidirectional ring reduce-scatter (kernels/reduce_scatter.h's
//   RingReducer, one per direction, each reducing half of every block), chunked through
//   VMEM with VPU adds. Time = all-gather time.
// - psum: per axis, the ring reduce-scatter above, then the bidirectional ring all-gather
//   of the reduced blocks (2x the reduce-scatter time). Several axes run one after the
//   other, in the order named. Elements that do not split evenly into X blocks (at most
//   X-1) are summed directly: every device sends them to every other, then adds in device
//   order.
// - ppermute: direct, one DMA per (source, destination) pair, routed the shorter way.
// - all_to_all: direct, every device sends chunk j to device j at once (the routers share
//   the links), which reaches §3's V/(4 W_ici) on a bidirectional ring.
// pmax and pmin run psum's algorithm with the VPU's max or min in place of the add.
// Every device of the mesh runs the kernel; the mesh axes not named form independent
// groups, and the collective runs within each group.

#include <string>
#include <utility>
#include <vector>

#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/lax/groups.h"
#include "kernels/reduce_scatter.h"

namespace tpusim::kernels::lax {

enum class Collective { kAllGather, kPsum, kPsumScatter, kPpermute, kAllToAll };

struct CollectiveSpec {  // one lax collective, in JAX's terms
  Collective kind;
  std::vector<std::string> axes;  // axis_name; psum may name several
  int axis = 0;                   // all_gather axis / psum_scatter scatter_dimension /
                                  // all_to_all split_axis
  int concat_axis = 0;            // all_to_all
  bool tiled = false;
  std::vector<std::pair<int, int>> perm;  // ppermute: (source, destination) axis indices
  // XLA's replica groups, as logical device ids, instead of `axes`: every device in exactly
  // one group, all groups of one size, each group a ring in the order listed. ppermute's
  // perm then names indices within the group.
  std::vector<std::vector<int>> groups = {};
  Reduction reduction = Reduction::kSum;  // psum only: pmax, pmin
};

// The groups the collective runs within, one DeviceGroups per stage: psum over several axes
// reduces one axis after the other; everything else has one stage. Assumes a Checked spec.
std::vector<DeviceGroups> Stages(const dsl::Mesh& mesh, const CollectiveSpec& spec);

// The per-device output type of the collective applied to a per-device x. Throws
// Error(ErrorKind::kInvalidArgument) naming the op and the fix: an axis name not in the
// mesh, a tiled dim that does not divide, a permutation that is not one, a bad axis
// index...
dsl::ShapeDtype OutputType(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                           const dsl::ShapeDtype& x);

// A pallas_call performing it: one input (x, per device, kAny) and one output (kAny).
dsl::PallasCall MakeCall(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                         const dsl::ShapeDtype& x);

// Host reference: per-device inputs indexed by logical device id -> per-device outputs.
std::vector<dsl::Array> Reference(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                                  const std::vector<dsl::Array>& x);

// "all_gather x", "psum (x, y)", "pmax x", "psum over 2 groups of 4": how traces and errors
// name it.
std::string Describe(const CollectiveSpec& spec);

}  // namespace tpusim::kernels::lax
