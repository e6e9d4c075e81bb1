#pragma once

// How the weight-gather matmuls (kernels/agw_matmul.cc) cut their problem on a mesh: the
// per-device shards, N's column chunks, and whether A_ij stays whole in VMEM or streams
// from HBM in k blocks; and which devices hold the rows of each K-chunk of the weights.

#include <algorithm>
#include <string>
#include <vector>

#include "dsl/mesh.h"
#include "kernels/agw_matmul.h"

namespace tpusim::kernels {

struct AgwBlocks {
  std::string x_axis, y_axis;
  int x = 1, y = 1;
  int64_t bm = 0;  // rows per device: M / X
  int64_t kx = 0;  // rows of W per device: K / X
  int64_t kk = 0;  // columns of A per device, the K-chunk: K / Y
  int64_t n = 0;   // N
  int64_t c = 1;   // column chunks of N
  int64_t nc = 0;  // N / C
  int64_t nb = 0;  // an all-reduce block: nc / Y
  // 0: A_ij [bm, kk] stays whole in VMEM (the fast path). Otherwise A_ij stays in HBM and
  // every column chunk streams it through VMEM in [bm, tk] blocks, two in flight.
  int64_t tk = 0;
  dsl::DType dtype = dsl::DType::kBF16;

  bool streamed() const { return tk > 0; }
  // Partials are the MXU's accumulators: f32, or int32 for integers, whose products are
  // int32 too.
  dsl::DType acc_dtype() const;
  dsl::DType out_dtype() const;
  // Steps of one chunk's ring all-reduce over y (at least 1, for the scratch shapes).
  int64_t ar_steps() const { return std::max(2 * (y - 1), 1); }
  // Every VMEM byte the kernels use: A_ij or its two blocks, two weight slots of a column
  // chunk, and the all-reduce's partial, receive and output buffers.
  uint64_t VmemBytes() const;
};

// The blocks for `problem` on `mesh`. Throws ParamError when the mesh or problem does not
// shard, or when not even the smallest blocks fit in the chip's VMEM, naming the fix.
AgwBlocks PlanAgwMatmul(const dsl::Mesh& mesh, const AgwMatmulProblem& problem);

// The rows of K-chunk j that x-block `owner` holds, as [begin, end) of K (may be empty).
struct AgwPiece {
  int owner;
  int64_t begin, end;
  int64_t rows() const { return end - begin; }
};
AgwPiece Overlap(const AgwBlocks& b, int owner, int j);
// The pieces of K-chunk j for device (i, j), its own x-block first: those rows need no
// transfer.
std::vector<AgwPiece> PiecesOf(const AgwBlocks& b, int i, int j);

}  // namespace tpusim::kernels
