#pragma once

// What the example programs' registry entries share: the entry itself, and the parts of
// its bound. A program's bound is what kernels' bounds are: max(its MXU FLOPs per chip at
// the MXU peak, docs/references.md §1; the bytes its layout must move over ICI at the link
// bound, §3). Programs that communicate count their collectives' bytes; the others are
// compute-only.

#include <functional>
#include <string>
#include <vector>

#include "dsl/mesh.h"
#include "kernels/params.h"
#include "kernels/registry.h"

namespace tpusim::programs {

using MakeFn = std::function<kernels::Workload(const dsl::Mesh&, const kernels::Params&)>;
using BoundFn = std::function<kernels::Bound(const dsl::Mesh&, const kernels::Params&)>;

// The entry "family/schedule": a program in `family` that takes `params`, with its bound,
// whose FLOPs per chip (compare's MXU share) are the bound's.
kernels::KernelInfo ProgramEntry(const std::string& family, const std::string& schedule,
                                 const std::string& summary, std::vector<kernels::Param> params,
                                 MakeFn make, BoundFn bound);

// The least time a collective takes that brings each chip the other devices' (X-1)/X of
// `bytes` over `axis`: bytes (X-1)/X / W, with W the links into a chip along the axis: both
// directions (W_ici) with wraparound, one (W_oneway) without (docs/references.md §3).
double LinkSeconds(const dsl::Mesh& mesh, const std::string& axis, double bytes);

// max(flops / peak MXU FLOP/s, link_seconds), per chip.
kernels::Bound ComputeOrLinkBound(const dsl::Mesh& mesh, double flops, double link_seconds,
                                  const std::string& formula);

}  // namespace tpusim::programs
