#include "kernels/agw_matmul_plan.h"

#include <numeric>

#include "base/errors.h"
#include "kernels/matmul.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

// N's column chunks: as many as keep an all-reduce block at least one 128-lane tile wide
// (more chunks leave less of the last all-reduce exposed, each costs 2(Y-1) hop
// latencies), or the bn given.
void SetColumnChunks(AgwBlocks& b, int64_t chunks) {
  b.c = chunks;
  b.nc = b.n / b.c;
  b.nb = b.nc / b.y;
}
int64_t DefaultColumnChunks(const AgwBlocks& b, const AgwMatmulProblem& problem) {
  if (problem.column_chunk > 0) return b.n / problem.column_chunk;
  for (int64_t c : {8, 4, 2}) {
    if (b.n % (c * b.y) == 0 && b.n / (c * b.y) >= 128) return c;
  }
  return 1;
}

// Everything but A_ij scales with the column chunk: when the chunks do not fit in VMEM,
// take more, narrower ones (each all-reduce step then moves less), while an all-reduce
// block stays at least `min_block` columns wide. Nothing else shares VMEM with these
// buffers: they may fill it.
void NarrowChunksToFit(AgwBlocks& b, const AgwMatmulProblem& problem, uint64_t budget,
                       int64_t min_block) {
  while (problem.column_chunk <= 0 && b.VmemBytes() > budget && b.n % (2 * b.c * b.y) == 0 &&
         b.nb / 2 >= min_block) {
    SetColumnChunks(b, 2 * b.c);
  }
}

[[noreturn]] void ThrowTooBig(const AgwBlocks& b, const AgwMatmulProblem& problem,
                              uint64_t budget) {
  std::string message = "agw_matmul cannot fit even its smallest blocks in VMEM: A_ij [" +
                        std::to_string(b.bm) + ", " + std::to_string(b.kk) + "]";
  if (b.streamed()) {
    message += " in two k blocks [" + std::to_string(b.bm) + ", " + std::to_string(b.tk) + "]";
  } else {
    message +=
        " whole (k/X and k/Y are not both multiples of 128, so it cannot stream in k "
        "blocks)";
  }
  message += ", and per column chunk of " + std::to_string(b.nc);
  message += " (bn) two weight slots [" + std::to_string(b.kk) + ", " + std::to_string(b.nc);
  message += "] and the all-reduce buffers need " + std::to_string(b.VmemBytes());
  message += " bytes, more than the chip's " + std::to_string(budget) + " bytes. ";
  // Without bn the chunks already narrowed as far as n allows.
  if (problem.column_chunk > 0) message += "Leave bn out so the column chunks can narrow, ";
  message +=
      "shard m over more devices (a larger axis X, which also shrinks the k blocks), or use a "
      "chip with more VMEM (chip.vmem.capacity_bytes).";
  throw ParamError({"m", "k", "n", "bn"}, message);
}

}  // namespace

DType AgwBlocks::acc_dtype() const {
  return IsFloating(dtype) ? DType::kF32 : DType::kInt32;
}
DType AgwBlocks::out_dtype() const {
  return IsFloating(dtype) ? dtype : DType::kInt32;
}

uint64_t AgwBlocks::VmemBytes() const {
  const uint64_t es = SizeOf(dtype), block = static_cast<uint64_t>(bm * nb);
  const uint64_t steps = static_cast<uint64_t>(ar_steps());
  const int64_t a_elems = streamed() ? 2 * bm * tk : bm * kk;
  return static_cast<uint64_t>(a_elems + 2 * kk * nc) * es +
         2 * block * ((y + steps) * SizeOf(acc_dtype()) + y * SizeOf(out_dtype()));
}

AgwBlocks PlanAgwMatmul(const Mesh& mesh, const AgwMatmulProblem& problem) {
  AgwBlocks b;
  b.x_axis = problem.x_axis;
  b.y_axis = problem.y_axis;
  if (b.y_axis.empty()) {
    for (const auto& name : mesh.axis_names()) {
      if (name != b.x_axis) {
        b.y_axis = name;
        break;
      }
    }
  }
  if (b.y_axis.empty() || b.y_axis == b.x_axis) {
    throw ParamError({"axis", "axis2"},
                     "agw_matmul needs a mesh with two axes, one sharding the weights' K (axis) "
                     "and another sharding the inputs' K (axis2, by default the first other "
                     "axis), and they must differ: a 1-D mesh has nowhere to put the second "
                     "sharding. Use a 2-D or 3-D slice such as v5e-2x2.");
  }
  b.x = mesh.AxisSize(b.x_axis);
  b.y = mesh.AxisSize(b.y_axis);
  const int64_t m = problem.m, k = problem.k, n = problem.n;
  if (m % b.x || k % b.x || k % b.y || n % b.y) {
    throw ParamError(
        {"m", "k", "n"},
        "inputs[" + std::to_string(m) + ", " + std::to_string(k) + "] x weights[" +
            std::to_string(k) + ", " + std::to_string(n) +
            "] does not shard evenly: m must be a multiple of X = " + std::to_string(b.x) +
            " (axis '" + b.x_axis + "'), k of both X and Y = " + std::to_string(b.y) + " (axis '" +
            b.y_axis + "'), and n of Y.");
  }
  b.bm = m / b.x;
  b.kx = k / b.x;
  b.kk = k / b.y;
  b.n = n;
  b.dtype = problem.dtype;
  if (problem.column_chunk > 0 && (n % problem.column_chunk || problem.column_chunk % b.y)) {
    throw ParamError({"bn"}, "bn " + std::to_string(problem.column_chunk) +
                                 " (the column chunk) must divide n (" + std::to_string(n) +
                                 ") and be a multiple of Y = " + std::to_string(b.y) + ".");
  }
  const int64_t chunks = DefaultColumnChunks(b, problem);
  SetColumnChunks(b, chunks);
  const uint64_t budget = mesh.topology().chip().vmem().capacity_bytes();
  // A_ij whole in VMEM when it fits next to chunks at least a 128-lane tile wide: it is
  // loaded once, not once per chunk.
  NarrowChunksToFit(b, problem, budget, 128);
  if (b.VmemBytes() <= budget) return b;
  // Else A_ij streams in k blocks that divide every piece of K-chunk j (their bounds are
  // multiples of gcd(K/X, K/Y)): from the default chunks, narrow those to a tile, then the
  // k blocks to 128, then the chunks below a tile. A resident A_ij that fits only next to
  // chunks narrower than a tile is the last resort, as when it cannot stream.
  const int64_t piece_quantum = std::gcd(b.kx, b.kk);
  if (piece_quantum % 128 == 0) {
    b.tk = DefaultBlock(512, piece_quantum, 128);
    SetColumnChunks(b, chunks);
    NarrowChunksToFit(b, problem, budget, 128);
    while (b.VmemBytes() > budget && b.tk > 128) {
      b.tk = DefaultBlock(b.tk / 2, piece_quantum, 128);
    }
    NarrowChunksToFit(b, problem, budget, 1);
    if (b.VmemBytes() <= budget) return b;
  }
  AgwBlocks resident = b;
  resident.tk = 0;
  NarrowChunksToFit(resident, problem, budget, 1);
  if (resident.VmemBytes() <= budget) return resident;
  ThrowTooBig(b.streamed() ? b : resident, problem, budget);
}

AgwPiece Overlap(const AgwBlocks& b, int owner, int j) {
  return AgwPiece{owner, std::max(owner * b.kx, j * b.kk),
                  std::min((owner + 1) * b.kx, (j + 1) * b.kk)};
}

std::vector<AgwPiece> PiecesOf(const AgwBlocks& b, int i, int j) {
  std::vector<AgwPiece> pieces;
  for (int d = 0; d < b.x; ++d) {
    const int owner = (i + d) % b.x;
    const AgwPiece p = Overlap(b, owner, j);
    if (p.rows() > 0) pieces.push_back(p);
  }
  return pieces;
}

}  // namespace tpusim::kernels
