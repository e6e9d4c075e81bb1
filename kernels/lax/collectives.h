#pragma once

// JAX's lax collectives (all_gather, psum, pmax, pmin, pmean, psum_scatter, ppermute,
// all_to_all) as Pallas kernels on the model, so their time comes from the same links,
// contention and latency as a hand-written kernel. Semantics and argument names follow jax.lax. A
// collective runs over named mesh axes, or (XLA's collectives) over explicit replica groups
// of devices: each group is a ring in the order it lists its devices, and a group that is
// not one mesh axis routes over several hops, as on hardware (kernels/lax/groups.h).
//
// Algorithms (kernels/lax/algorithm.h names them, kernels/lax/gather.h and staged.h
// describe each, kernels/lax/plan.h says how one is chosen per call):
// - all_gather: ring, bidi_ring, direct or recursive_doubling, HBM to HBM.
// - psum_scatter: ring (kernels/reduce_scatter.h's chunked RingReducer, one direction),
//   bidi_ring (one RingReducer per direction, each reducing half of every block: both
//   directions of a wrapped axis carry partial sums, as XLA's do) or direct (through VMEM).
// - psum, pmax, pmin, pmean: per stage, ring or bidi_ring (that reduce-scatter, then the
//   all-gather of the reduced blocks: 2x its time), or direct or recursive_doubling
//   all-reduces through VMEM. Over several axes (or replica groups spanning several torus
//   axes) the stages nest as XLA's multi-dimensional all-reduce does: reduce-scatter along
//   the first axis, then the next within the block kept, ..., then all-gather in reverse
//   order; a latency stage all-reduces the block it is given. Elements that do not split
//   into whole blocks (fewer than the product of the ring stages' sizes) are all-reduced
//   directly, stage by stage. pmax and pmin combine with the VPU's max and min; pmean is
//   psum then a VPU pass scaling by 1/X in f32 (integer operands give an f32 mean, as
//   jax.lax.pmean's division does).
// - ppermute: direct, one DMA per (source, destination) pair, routed the shorter way.
// - all_to_all: direct, every device sends chunk j to device j at once (the routers share
//   the links), which reaches §3's V/(4 W_ici) on a bidirectional ring.
// - collective_broadcast (XLA's collective-broadcast; jax.lax has none): the first device of
//   each group (its root) sends its x to every member, whose own x is not read. direct: one
//   step, the root sends x to every member at once (farthest first). recursive_doubling: a
//   binomial tree of log2 X steps halving the distance: at step k every device holding x
//   sends it X/2^(k+1) places on. ring, bidi_ring: scatter then all-gather (van de Geijn):
//   the root sends block i of x (1/X of it) straight to member i, then the members gather
//   the blocks with that ring algorithm (kernels/lax/gather.h), bandwidth-optimal for large x.
// Every device of the mesh runs the kernel; the mesh axes not named form independent
// groups, and the collective runs within each group.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "kernels/lax/algorithm.h"
#include "kernels/lax/groups.h"
#include "kernels/reduce_scatter.h"

namespace tpusim::kernels::lax {

enum class Collective { kAllGather, kPsum, kPsumScatter, kPpermute, kAllToAll, kBroadcast };

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
  bool mean = false;                      // psum only: pmean
  // The algorithm to run, instead of the one kernels/lax/plan.h would choose.
  std::optional<Algorithm> algorithm = std::nullopt;
};

// Whether `kind` implements `algorithm`: all_gather, the psum family and collective_broadcast
// all of them, psum_scatter ring, bidi_ring and direct, ppermute and all_to_all direct only.
bool Implements(Collective kind, Algorithm algorithm);

// The groups the collective runs within (every named axis at once, or the replica groups).
// Assumes a Checked spec.
DeviceGroups GroupsOf(const dsl::Mesh& mesh, const CollectiveSpec& spec);

// The per-device output type of the collective applied to a per-device x. Throws
// Error(ErrorKind::kInvalidArgument) naming the op and the fix: an axis name not in the
// mesh, a tiled dim that does not divide, a permutation that is not one, a bad axis
// index...
dsl::ShapeDtype OutputType(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                           const dsl::ShapeDtype& x);

// A pallas_call performing it: one input (x, per device, kAny) and one output (kAny). Its
// algorithm is the plan's (kernels/lax/plan.h: PlanCollective), or `plan`'s when given.
struct CollectivePlan;
dsl::PallasCall MakeCall(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                         const dsl::ShapeDtype& x);
dsl::PallasCall MakeCall(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                         const dsl::ShapeDtype& x, const CollectivePlan& plan);

// Host reference: per-device inputs indexed by logical device id -> per-device outputs.
std::vector<dsl::Array> Reference(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                                  const std::vector<dsl::Array>& x);

// "all_gather x", "psum (x, y)", "pmax x", "psum over 2 groups of 4": how traces and errors
// name it.
std::string Describe(const CollectiveSpec& spec);

}  // namespace tpusim::kernels::lax
