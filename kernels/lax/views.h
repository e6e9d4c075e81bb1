#pragma once

// Ref views the lax kernels need beyond Ref::at, and a blocking local copy.

#include <string>

#include "dsl/kernel.h"
#include "dsl/ref.h"

namespace tpusim::kernels::lax {

// ref[..., start:start+size, ...] along `dim` (other dims whole).
dsl::Ref SliceDim(const dsl::Ref& ref, int dim, int64_t start, int64_t size);
// ref[..., index, ...]: drops `dim`.
dsl::Ref IndexDim(const dsl::Ref& ref, int dim, int64_t index);
// A whole, row-major operand seen with another shape of the same or fewer elements (as
// Pallas's ref.reshape): the lax kernels see every collective as [rows, X, cols] blocks.
dsl::Ref Reshape(const dsl::Ref& operand, const dsl::Shape& shape);

// Copies src to dst on this device and waits for it.
void CopyLocal(dsl::Kernel& k, const dsl::Ref& src, const dsl::Ref& dst, const dsl::Ref& sem);

}  // namespace tpusim::kernels::lax
