#pragma once

// What `tpusim compare` checks before it runs anything: that its entries compute the same
// thing (tools/tpusim/kernel_run.h, Contract).

#include <string>
#include <vector>

#include "dsl/mesh.h"
#include "kernels/params.h"
#include "kernels/registry.h"
#include "tools/tpusim/kernel_run.h"

namespace tpusim::cli {

// The first entry's contract, once every entry, with the parameters of `given` it takes
// (tools/tpusim/param_flags.h), is checked against it:
//   - every entry has the same global problem (Contract::Problem: input types, output
//     shapes; output dtypes may differ);
//   - every kernel has the first kernel's PartitionSpecs too (Contract::Shapes);
//   - in a functional run, a program and the first entry have the same inputs, bit for
//     bit, and host references that agree within the looser of their tolerances (so an f32
//     and a bf16 result of one product agree). A program's specs are its own.
// Throws UsageError("compare", ...) naming both entries, both contracts and the reason.
Contract CheckSameComputation(const std::vector<const kernels::KernelInfo*>& entries,
                              const dsl::Mesh& mesh, const kernels::ParamValues& given,
                              bool functional);

// Empty when `other`'s inputs are `first`'s and their references agree (or either has
// none); otherwise what differs, e.g. "output 0: element [0, 1] is 0, expected 0.25 (...)".
std::string ReferenceDifference(const kernels::Workload& first, const kernels::Workload& other);

}  // namespace tpusim::cli
