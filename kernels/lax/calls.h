#pragma once

// Inside the lax collectives: the checked form of a spec and one pallas_call maker per
// collective. Makers take a spec that Checked() returned.

#include "kernels/lax/collectives.h"
#include "kernels/lax/plan.h"
#include "kernels/lax/staged.h"
#include "kernels/reduce_scatter.h"

namespace tpusim::kernels::lax {

// Validates `spec` against the mesh and x (throwing as OutputType documents) and returns
// it with negative dimension indices made non-negative, as JAX canonicalises them.
CollectiveSpec Checked(const dsl::Mesh& mesh, const CollectiveSpec& spec, const dsl::ShapeDtype& x);

// Each runs the algorithms `plan` gives its stages (kernels/lax/plan.h).
dsl::PallasCall MakeAllGather(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                              const dsl::ShapeDtype& x, const dsl::ShapeDtype& out,
                              const CollectivePlan& plan);
dsl::PallasCall MakePsumScatter(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                                const dsl::ShapeDtype& x, const dsl::ShapeDtype& out,
                                const CollectivePlan& plan);
dsl::PallasCall MakePsum(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                         const dsl::ShapeDtype& x, const dsl::ShapeDtype& out,
                         const CollectivePlan& plan);
dsl::PallasCall MakePpermute(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                             const dsl::ShapeDtype& x, const CollectivePlan& plan);
dsl::PallasCall MakeBroadcast(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                              const dsl::ShapeDtype& x, const CollectivePlan& plan);
dsl::PallasCall MakeAllToAll(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                             const dsl::ShapeDtype& x, const dsl::ShapeDtype& out,
                             const CollectivePlan& plan);

// One reduce-scatter over a ring, as psum_scatter and psum's ring stages run it: x (HBM)
// viewed as [rows, X, cols] (or flat, [X cols], when rows is 1 and x has rank 1), and this
// device's block of the result written to out_block ([rows, cols] or [cols]). ring and
// bidi_ring run kernels/reduce_scatter.h's RingReducers (bidi_ring: one per direction, each
// reducing half the columns of every block), direct a staged reduction (staged.h).
struct ScatterStage {
  Algorithm algorithm = Algorithm::kBidiRing;
  RingReducePlan right, left;  // ring: right only
  StagedPlan staged;           // direct
  std::string prefix;          // of its scratch's names
};
// `reducers`: how many ring reducers share VMEM in the whole call; `staged_share`: the part
// of VMEM a direct stage's slots may take.
ScatterStage PlanScatterStage(const dsl::Mesh& mesh, dsl::DType dtype, Reduction reduction,
                              Algorithm algorithm, int ring_size, int64_t rows, int64_t cols,
                              int reducers, double staged_share, const std::string& prefix);
void AddScatterScratch(dsl::GridSpec& grid, const ScatterStage& stage, dsl::DType dtype);
// Run after the start barrier (PeersOf the stage's algorithm).
void RunScatterStage(dsl::Kernel& k, const dsl::Ring& ring, const ScatterStage& stage,
                     Reduction reduction, const dsl::Ref& x, const dsl::Ref& out_block);

// A kernel body wrapped in a trace slice named after the plan's algorithm, whose arguments
// are the plan's estimate (the trace's record of where the collective's time goes).
dsl::KernelFn Annotated(dsl::KernelFn kernel, const CollectivePlan& plan);

// Devices per group of a checked spec: the size of its (first) axis, or of its replica groups.
int GroupSize(const dsl::Mesh& mesh, const CollectiveSpec& spec);

}  // namespace tpusim::kernels::lax
