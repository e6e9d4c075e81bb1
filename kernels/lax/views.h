#pragma once

// Ref views the lax kernels need beyond Ref::at, and the ring gather they share.

#include <functional>
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

// Bidirectional ring all-gather, in place: device i's `block(i)` already holds its own
// block (the same view on every device); afterwards every device holds every block. Each
// block is cut in two along its first dimension of size >= 2, and the halves go round the
// ring in opposite directions. send_sems and recv_sems: DMA [2, >= X-1]. The caller has met
// its ring neighbours already.
void BidiRingGather(dsl::Kernel& k, const dsl::Ring& ring,
                    const std::function<dsl::Ref(int)>& block, const dsl::Ref& send_sems,
                    const dsl::Ref& recv_sems);

// Copies src to dst on this device and waits for it.
void CopyLocal(dsl::Kernel& k, const dsl::Ref& src, const dsl::Ref& dst, const dsl::Ref& sem);

}  // namespace tpusim::kernels::lax
