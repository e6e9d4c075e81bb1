#pragma once

// The host memory a functional run needs, estimated from shapes and dtypes alone, so a run
// that would not fit is refused before its inputs and host reference are built (building
// them can take minutes and gigabytes), not after.

#include "kernels/registry.h"

namespace tpusim::cli {

struct RunMemory {
  // The global inputs and the host reference: its outputs, and working copies of every
  // input and output widened to f32 (integers: 64 bits), as the references compute.
  double host = 0;
  // Every chip's input and output blocks in HBM, the output blocks read back, and the
  // assembled global outputs.
  double chips = 0;
};

// From any workload of the entry, a shapes-only one included. A program's outputs count
// when it declares them (Workload::out_types) or has a reference.
RunMemory EstimateRunMemory(const kernels::Workload& workload);

// Throws Error(kCapacity) with the estimate and the fix, ending in "(flag --timing-only)",
// when a functional run of `workload` would not fit the host's memory. `built`: its inputs
// and reference exist already, so only the chips' part is still to come (the backstop
// after building); otherwise all of it (the check before).
void RequireRunMemory(const kernels::Workload& workload, bool built);

}  // namespace tpusim::cli
