#pragma once

// One device's share of a collective matmul, out[rows, cols] = sum over passes of
// a_p[rows, kp] @ w_p[kp, cols], with every operand in HBM and only the blocks in flight
// in VMEM, as the plain matmul (kernels/matmul.h) streams its operands. A pass is one
// emit_pipeline over (rows/tm, cols/tn, kp/tk) with k last, so the MXU multiplies block
// kk while block kk+1 comes from HBM. Between passes the sum lives either
//   resident: in a VMEM accumulator [rows, cols] (f32, int32 for integers) when it fits,
//             so a pass streams only a and w, and the last pass casts it out; or
//   streamed: in HBM, two f32 (int32) partial buffers a pass reads one of and writes the
//             other, so any size that fits in HBM runs.
// The collective matmuls call Add once per chunk as the chunks arrive, so the ring's DMAs
// overlap the passes.

#include <optional>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"

namespace tpusim::kernels {

struct ChunkMatmulPlan {
  int64_t rows = 0, kp = 0, cols = 0;  // kp: the largest pass's k
  int64_t tm = 0, tk = 0, tn = 0;      // blocks
  bool resident = false;
  bool a_in_vmem = false;                // resident: the dots read a where it is, no slots for it
  dsl::DType dtype = dsl::DType::kBF16;  // of a and w

  bool integer() const { return dtype == dsl::DType::kInt8 || dtype == dsl::DType::kInt32; }
  // Integer products are exact in int32; float ones come out in the operands' dtype.
  dsl::DType out_dtype() const { return integer() ? dsl::DType::kInt32 : dtype; }
  dsl::DType acc_dtype() const { return integer() ? dsl::DType::kInt32 : dsl::DType::kF32; }
  // The scratch the product needs, appended to a kernel's: "cm_acc" (VMEM), "cm_sems"
  // (DMA [3, 2]), and resident "cm_out" (VMEM [rows, cols]), "cm_w" and unless a is in
  // VMEM "cm_a" (the block slots), or streamed "cm_partial" (HBM [2, rows, cols]).
  std::vector<dsl::ScratchSpec> Scratch() const;
};

// The resident plan, if it fits in `vmem_budget` bytes. `a_in_vmem`: every pass's a is
// in VMEM (no slots for it). The k blocks are about a quarter of a pass, so a pass's first
// dot waits for little; `whole_passes` makes them whole passes (when they fit), so the
// next pass's w arrives entirely during this one, which is what counts when a pass waits
// on the ring anyway.
std::optional<ChunkMatmulPlan> PlanResidentChunkMatmul(int64_t rows, int64_t k_quantum,
                                                       int64_t cols, dsl::DType dtype,
                                                       uint64_t vmem_budget, bool a_in_vmem = false,
                                                       bool whole_passes = false);
// Blocks for `kernel`'s passes, each with k a multiple of `k_quantum` (every pass's k must
// be one): resident when the accumulator, the output staging and two blocks of a and w
// fit in `vmem_budget` bytes, else streamed with the matmul's default blocks (512, 1024,
// 1024), halved until their buffers fit. Throws ParamError naming the block and the fix
// when not even (8, 128, 128) blocks fit.
ChunkMatmulPlan PlanChunkMatmul(const std::string& kernel, int64_t rows, int64_t k_quantum,
                                int64_t cols, dsl::DType dtype, uint64_t vmem_budget);

// What a collective matmul lets its blocks use: 3/4 of the chip's VMEM, leaving room for
// the allocator's alignment and the kernel's own small buffers.
uint64_t VmemBudget(const dsl::Mesh& mesh);

// The streamed plan alone, for kernels that keep their sums in HBM themselves.
ChunkMatmulPlan PlanStreamedChunkMatmul(const std::string& kernel, int64_t rows, int64_t k_quantum,
                                        int64_t cols, dsl::DType dtype, uint64_t vmem_budget);

// One streamed pass: out = a @ w (+ init), every operand in HBM ([rows, kp'], [kp', cols],
// [rows, cols]), in the plan's blocks; needs "cm_acc" [tm, tn] of acc_dtype() in scratch.
void StreamMatmul(dsl::Kernel& k, const ChunkMatmulPlan& plan, const dsl::Ref& a, const dsl::Ref& w,
                  const std::optional<dsl::Ref>& init, const dsl::Ref& out);
// out = x + y, or out = x cast to out's dtype without y, over HBM [rows, cols] in (tm, tn)
// tiles.
void StreamElementwise(dsl::Kernel& k, const ChunkMatmulPlan& plan, const dsl::Ref& out,
                       const dsl::Ref& x, const std::optional<dsl::Ref>& y = std::nullopt);

// The running product of one kernel invocation.
class ChunkProduct {
 public:
  // Finds the refs of Scratch() by name.
  ChunkProduct(dsl::Kernel& k, const ChunkMatmulPlan& plan);
  // acc (+)= a @ w, a HBM [rows, kp'] (or, resident, VMEM: the dots read it in place),
  // w HBM [kp', cols]; `last`: the final pass, which
  // leaves the product in `out` (HBM [rows, cols], out_dtype()). Resident, the passes
  // form one stream of k blocks, double-buffered: the first blocks of `next_w` and
  // `next_a` (the next pass's operands, when known and ready) are fetched during this
  // pass's last dot.
  void Add(const dsl::Ref& a, const dsl::Ref& w, bool last, const dsl::Ref& out,
           const std::optional<dsl::Ref>& next_w = std::nullopt,
           const std::optional<dsl::Ref>& next_a = std::nullopt);
  // Resident: starts fetching the next pass's first block of a, once it has arrived.
  void Prefetch(const dsl::Ref& next_a);

 private:
  int64_t BlockK(int64_t kp) const;  // the k block of a pass of kp
  void StartA(const dsl::Ref& a, int64_t kk, int64_t tk, int slot);
  void StartW(const dsl::Ref& w, int64_t kk, int64_t tk, int slot);
  void AddStreamed(const dsl::Ref& a, const dsl::Ref& w, bool last, const dsl::Ref& out);

  dsl::Kernel& k_;
  ChunkMatmulPlan plan_;
  int passes_ = 0;
  int64_t block_ = 0;  // resident: the next k block's number, whose parity is its slot
  std::optional<dsl::AsyncCopy> a_loads_[2], w_loads_[2];
};

}  // namespace tpusim::kernels
