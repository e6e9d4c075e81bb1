#pragma once

// How a lax collective runs: its stages (the groups it communicates within, one after the
// other) and the algorithm of each, with the cost estimate that chose them.
//
// A collective over one mesh axis, or over replica groups that are not a sub-grid of the
// mesh, has one stage: its groups, each a ring in its order. A psum (pmax, pmin, pmean) over
// several axes, and a psum or all_gather over replica groups that span several torus axes
// (every group a box: the product of a set of coordinates on each axis it spans), runs as
// XLA's multi-dimensional decomposition: one stage per axis, each along the lines of that
// axis within the groups (kernels/lax/collectives.h says what each stage does).
//
// Unless forced, each stage's algorithm is the one the cost estimate (kernels/lax/
// cost_model.h) finds fastest among those the collective implements and the group allows
// (recursive_doubling needs a power-of-two group), trying every combination over the stages;
// ties go to the earlier in AllAlgorithms() order. What is published about XLA on TPU fixes
// the shape (bidirectional rings per torus dimension, the multi-dimensional decomposition:
// docs/references.md §3) but not how it picks among algorithms by size, so tpusim chooses as
// an autotuner would, from the model's own link parameters. Plans are cached per mesh, spec
// and operand type: every device of a program asks for the same one.

#include <memory>
#include <string>
#include <vector>

#include "base/core_port.h"
#include "dsl/mesh.h"
#include "kernels/lax/collectives.h"
#include "kernels/lax/cost_model.h"

namespace tpusim::kernels::lax {

struct Stage {
  std::shared_ptr<const DeviceGroups> groups;
  Algorithm algorithm = Algorithm::kBidiRing;
  std::string over;  // what the stage runs over: "x", "replica groups", "y of the groups"
  // The ring's last device reaches its first in no more hops than any other neighbour
  // does (an axis with wraparound, a ring of 2): bidi_ring then meets halfway round.
  // Otherwise the ring is a line and bidi_ring runs along it both ways.
  bool closed = true;
};

struct CollectivePlan {
  std::vector<Stage> stages;
  CollectiveCost cost;
  bool forced = false;  // the algorithm was given, not chosen
  // "bidi_ring", or per stage: "ring over x, direct over y".
  std::string Describe() const;
};

// The prefix of stage `stage`'s scratch names: "s0_", "s1_", ...
std::string StagePrefix(size_t stage);

// The plan and its estimate as a trace slice's arguments: algorithm, estimated latency and
// bandwidth parts (ns), bytes on the busiest link.
base::CorePort::ScopeDetails PlanDetails(const CollectivePlan& plan);

// The plan for a checked spec (Checked) and per-device operand x. A forced algorithm
// (spec.algorithm) runs on every stage; throws Error(kInvalidArgument) naming the collective
// and the fix when the collective does not implement it or a group cannot run it.
CollectivePlan PlanCollective(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                              const dsl::ShapeDtype& x);

}  // namespace tpusim::kernels::lax
