#include "kernels/chunk_matmul.h"

#include "dsl/pipeline.h"
#include "kernels/matmul.h"
#include "kernels/params.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

// The largest multiple of `quantum` up to block / 2 that divides `extent`; `block` when
// there is none.
int64_t Halve(int64_t block, int64_t extent, int64_t quantum) {
  for (int64_t c = block / 2 / quantum * quantum; c >= quantum; c -= quantum) {
    if (extent % c == 0) return c;
  }
  return block;
}

uint64_t StreamedBytes(const ChunkMatmulPlan& p) {
  const uint64_t es = SizeOf(p.dtype), acc = SizeOf(p.acc_dtype());
  const uint64_t tile = static_cast<uint64_t>(p.tm * p.tn);
  // The accumulator, two buffers each of a, w, the partial read and the one written.
  return tile * acc + 2 * static_cast<uint64_t>(p.tm * p.tk + p.tk * p.tn) * es + 4 * tile * acc;
}

uint64_t ResidentBytes(const ChunkMatmulPlan& p) {
  const uint64_t whole = static_cast<uint64_t>(p.rows * p.cols);
  return whole * (SizeOf(p.acc_dtype()) + SizeOf(p.out_dtype())) +
         2 * static_cast<uint64_t>((p.a_in_vmem ? 0 : p.rows * p.tk) + p.tk * p.cols) *
             SizeOf(p.dtype);
}

// A plan's problem (a pass of rows x k_quantum times k_quantum x cols), no blocks chosen.
ChunkMatmulPlan ProblemOf(int64_t rows, int64_t k_quantum, int64_t cols, DType dtype) {
  ChunkMatmulPlan p;
  p.rows = rows;
  p.kp = k_quantum;
  p.cols = cols;
  p.dtype = dtype;
  return p;
}

}  // namespace

std::vector<ScratchSpec> ChunkMatmulPlan::Scratch() const {
  std::vector<ScratchSpec> s = {ScratchSpec::VMEM({tm, tn}, acc_dtype(), "cm_acc"),
                                ScratchSpec::DMA({3, 2}, "cm_sems")};
  if (resident) {
    s.push_back(ScratchSpec::VMEM({rows, cols}, out_dtype(), "cm_out"));
    if (!a_in_vmem) s.push_back(ScratchSpec::VMEM({2, rows, tk}, dtype, "cm_a"));
    s.push_back(ScratchSpec::VMEM({2, tk, cols}, dtype, "cm_w"));
  } else {
    s.push_back(ScratchSpec::HBM({2, rows, cols}, acc_dtype(), "cm_partial"));
  }
  return s;
}

std::optional<ChunkMatmulPlan> PlanResidentChunkMatmul(int64_t rows, int64_t k_quantum,
                                                       int64_t cols, DType dtype,
                                                       uint64_t vmem_budget, bool a_in_vmem,
                                                       bool whole_passes) {
  ChunkMatmulPlan p = ProblemOf(rows, k_quantum, cols, dtype);
  // The whole accumulator in VMEM, a and w in k blocks, about four per pass so that the
  // first block's fetch is short.
  p.resident = true;
  p.tm = rows;
  p.tn = cols;
  p.a_in_vmem = a_in_vmem;
  p.tk = whole_passes ? k_quantum
                      : DefaultBlock(std::max<int64_t>(128, std::min<int64_t>(1024, k_quantum / 4)),
                                     k_quantum, 128);
  while (ResidentBytes(p) > vmem_budget) {
    const int64_t smaller = Halve(p.tk, k_quantum, 128);
    if (smaller == p.tk) return std::nullopt;
    p.tk = smaller;
  }
  return p;
}

ChunkMatmulPlan PlanChunkMatmul(const std::string& kernel, int64_t rows, int64_t k_quantum,
                                int64_t cols, DType dtype, uint64_t vmem_budget) {
  if (auto resident = PlanResidentChunkMatmul(rows, k_quantum, cols, dtype, vmem_budget)) {
    return *resident;
  }
  return PlanStreamedChunkMatmul(kernel, rows, k_quantum, cols, dtype, vmem_budget);
}

ChunkMatmulPlan PlanStreamedChunkMatmul(const std::string& kernel, int64_t rows, int64_t k_quantum,
                                        int64_t cols, DType dtype, uint64_t vmem_budget) {
  ChunkMatmulPlan p = ProblemOf(rows, k_quantum, cols, dtype);
  p.resident = false;
  p.tm = DefaultBlock(512, rows, 8);
  p.tn = DefaultBlock(1024, cols, 128);
  p.tk = DefaultBlock(1024, k_quantum, 128);
  while (StreamedBytes(p) > vmem_budget) {
    // Halve the largest block that can shrink.
    struct Dim {
      int64_t* block;
      int64_t extent, quantum;
    } dims[] = {{&p.tk, k_quantum, 128}, {&p.tn, cols, 128}, {&p.tm, rows, 8}};
    Dim* best = nullptr;
    for (Dim& d : dims) {
      if (Halve(*d.block, d.extent, d.quantum) == *d.block) continue;
      if (!best || *d.block > *best->block) best = &d;
    }
    if (!best) {
      std::string message = kernel;
      message += ": its smallest blocks (rows ";
      message += std::to_string(p.tm) + ", k " + std::to_string(p.tk) + ", columns " +
                 std::to_string(p.tn);
      message += ") need " + std::to_string(StreamedBytes(p));
      message += " bytes of VMEM with double buffering, more than the chip's VMEM budget of " +
                 std::to_string(vmem_budget);
      message +=
          " bytes. Use a topology whose chip has more VMEM (chip.vmem.capacity_bytes), or "
          "sizes whose per-device rows, k-chunk and columns are multiples of 8, 128 and 128, "
          "so the blocks can shrink.";
      throw ParamError({"m", "k", "n"}, message);
    }
    *best->block = Halve(*best->block, best->extent, best->quantum);
  }
  return p;
}

uint64_t VmemBudget(const Mesh& mesh) {
  return mesh.topology().chip().vmem().capacity_bytes() / 4 * 3;
}

ChunkProduct::ChunkProduct(Kernel& k, const ChunkMatmulPlan& plan) : k_(k), plan_(plan) {}

int64_t ChunkProduct::BlockK(int64_t kp) const {
  if (kp <= plan_.tk) return kp;
  int64_t tk = plan_.tk;
  while (kp % tk)
    --tk;  // a half chunk that plan_.tk does not divide
  return tk;
}

void ChunkProduct::StartA(const Ref& a, int64_t kk, int64_t tk, int slot) {
  if (a.memory_space() == MemorySpace::kVmem) return;  // the dots read it where it is
  a_loads_[slot] = k_.async_copy(a.at(ds(0, plan_.rows), ds(kk * tk, tk)),
                                 k_.ref("cm_a").at(slot, ds(0, plan_.rows), ds(0, tk)),
                                 k_.ref("cm_sems").at(slot, 0));
  a_loads_[slot]->start();
}

void ChunkProduct::StartW(const Ref& w, int64_t kk, int64_t tk, int slot) {
  w_loads_[slot] = k_.async_copy(w.at(ds(kk * tk, tk), ds(0, plan_.cols)),
                                 k_.ref("cm_w").at(slot, ds(0, tk), ds(0, plan_.cols)),
                                 k_.ref("cm_sems").at(slot, 1));
  w_loads_[slot]->start();
}

void ChunkProduct::Prefetch(const Ref& next_a) {
  if (!plan_.resident) return;
  const int slot = static_cast<int>(block_ % 2);
  if (!a_loads_[slot]) StartA(next_a, 0, BlockK(next_a.shape()[1]), slot);
}

void ChunkProduct::Add(const Ref& a, const Ref& w, bool last, const Ref& out,
                       const std::optional<Ref>& next_w, const std::optional<Ref>& next_a) {
  if (!plan_.resident) {
    AddStreamed(a, w, last, out);
    return;
  }
  const bool first = passes_++ == 0;
  const Ref acc = k_.ref("cm_acc"), cm_w = k_.ref("cm_w");
  const int64_t tk = BlockK(a.shape()[1]);
  const int64_t ksteps = a.shape()[1] / tk;
  for (int64_t kk = 0; kk < ksteps; ++kk, ++block_) {
    const int slot = static_cast<int>(block_ % 2), other = 1 - slot;
    const bool a_in_vmem = a.memory_space() == MemorySpace::kVmem;
    if (!a_loads_[slot]) StartA(a, kk, tk, slot);
    if (!w_loads_[slot]) StartW(w, kk, tk, slot);
    // The other slot's dot is done: fetch the next block into it while this one runs.
    if (kk + 1 < ksteps) {
      StartA(a, kk + 1, tk, other);
      StartW(w, kk + 1, tk, other);
    } else {
      if (next_w) StartW(*next_w, 0, BlockK(next_w->shape()[0]), other);
      if (next_a) StartA(*next_a, 0, BlockK(next_a->shape()[1]), other);
    }
    if (a_loads_[slot]) a_loads_[slot]->wait();
    w_loads_[slot]->wait();
    a_loads_[slot].reset();
    w_loads_[slot].reset();
    const Ref a_block = a_in_vmem ? a.at(ds(0, plan_.rows), ds(kk * tk, tk))
                                  : k_.ref("cm_a").at(slot, ds(0, plan_.rows), ds(0, tk));
    k_.dot(a_block, cm_w.at(slot, ds(0, tk), ds(0, plan_.cols)), acc,
           /*accumulate=*/!first || kk > 0);
  }
  if (last) {
    const Ref staged = k_.ref("cm_out");
    k_.cast(staged, acc);
    AsyncCopy store = k_.async_copy(staged, out, k_.ref("cm_sems").at(2, 0));
    store.start();
    store.wait();
  }
}

void ChunkProduct::AddStreamed(const Ref& a, const Ref& w, bool last, const Ref& out) {
  // Pass i reads partial[(i - 1) % 2] and writes partial[i % 2], or `out`.
  const Ref partial = k_.ref("cm_partial");
  const int pass = passes_++;
  std::optional<Ref> init;
  if (pass > 0) init = partial.at((pass + 1) % 2);
  StreamMatmul(k_, plan_, a, w, init, last ? out : partial.at(pass % 2));
}

void StreamMatmul(Kernel& k, const ChunkMatmulPlan& p, const Ref& a, const Ref& w,
                  const std::optional<Ref>& init, const Ref& out) {
  const Ref acc = k.ref("cm_acc");
  const int64_t kp = a.shape()[1];
  int64_t tk = std::min(p.tk, kp);
  while (kp % tk)
    --tk;  // a half chunk that p.tk does not divide
  const int ksteps = static_cast<int>(kp / tk);
  std::vector<BlockSpec> in_specs = {BlockSpec({p.tm, tk},
                                               [](int i, int, int kk) {
                                                 return BlockIndex{i, kk};
                                               }),
                                     BlockSpec({tk, p.tn}, [](int, int j, int kk) {
                                       return BlockIndex{kk, j};
                                     })};
  Refs inputs = {a, w};
  const BlockSpec tile({p.tm, p.tn}, [](int i, int j, int) { return BlockIndex{i, j}; });
  if (init) {
    in_specs.push_back(tile);
    inputs.push_back(*init);
  }
  const bool add = init.has_value();
  emit_pipeline(k,
                [&](const std::vector<int>& ids, const Refs& blocks) {
                  const int kk = ids[2];
                  if (kk == 0 && add) k.cast(acc, blocks[2]);
                  k.dot(blocks[0], blocks[1], acc, /*accumulate=*/add || kk > 0);
                  if (kk == ksteps - 1) k.cast(blocks.back(), acc);
                },
                {static_cast<int>(p.rows / p.tm), static_cast<int>(p.cols / p.tn), ksteps},
                in_specs, {tile}, inputs, {out}, {"parallel", "parallel", "arbitrary"});
}

void StreamElementwise(Kernel& k, const ChunkMatmulPlan& p, const Ref& out, const Ref& x,
                       const std::optional<Ref>& y) {
  const BlockSpec tile({p.tm, p.tn}, [](int i, int j) { return BlockIndex{i, j}; });
  Refs inputs = {x};
  if (y) inputs.push_back(*y);
  emit_pipeline(k,
                [&](const std::vector<int>&, const Refs& blocks) {
                  if (y) {
                    k.add(blocks[2], blocks[0], blocks[1]);
                  } else {
                    k.cast(blocks[1], blocks[0]);
                  }
                },
                {static_cast<int>(p.rows / p.tm), static_cast<int>(p.cols / p.tn)},
                std::vector<BlockSpec>(inputs.size(), tile), {tile}, inputs, {out},
                {"parallel", "parallel"});
}

}  // namespace tpusim::kernels
