#pragma once

// The ring all-reduce over y of one column chunk's partial product, which both
// weight-gather matmuls (kernels/agw_matmul.cc) run once per chunk.

#include <optional>
#include <vector>

#include "dsl/kernel.h"
#include "kernels/agw_matmul_plan.h"

namespace tpusim::kernels {

// The refs one all-reduce over y uses, found by name in the kernel's scratch; the f32
// partial of a chunk is `Y` blocks [bm, nb], one per device of the y ring.
struct AgwArRefs {
  dsl::Ref partial;     // "partial": VMEM f32 [2, Y, bm, nb], by chunk parity
  dsl::Ref recv;        // "ar_recv": VMEM f32 [2, 2(Y-1), bm, nb], one slot per step
  dsl::Ref send_sems;   // "ar_send_sems": DMA [2, 2(Y-1)]
  dsl::Ref recv_sems;   // "ar_recv_sems": DMA [2, 2(Y-1)]
  dsl::Ref credit;      // "ar_credit": REGULAR [2], the right neighbour's slots are free
  dsl::Ref out_vmem;    // "out_vmem": VMEM dtype [2, Y, bm, nb]
  dsl::Ref store_sems;  // "store_sems": DMA [2, Y]

  static AgwArRefs Of(const dsl::Kernel& k);
  // Their scratch shapes, in the order above.
  static std::vector<dsl::ScratchSpec> Scratch(const AgwBlocks& b);
};

// Ring all-reduce of one chunk's partial over y: Y-1 reduce-scatter steps (add the
// arriving partial sum of a block, pass it on), then Y-1 all-gather steps (pass the
// reduced blocks on), 2 (V/W_oneway)(Y-1)/Y. Every step receives into its own slot, so
// within a chunk no slot is reused; across chunks the slots of a parity are reused two
// chunks later, after the receiver gave its left neighbour a credit. Start() sends the
// first block; each Advance() waits for one arrival and sends the next block, so a kernel
// may multiply between Advance() calls while the sends move.
class ChunkAllReduce {
 public:
  // Output stores outlive a chunk: out_vmem[parity] is reused two chunks later. The kernel
  // body owns them ([parity][block]) and drains them at the end.
  using Stores = std::vector<std::vector<std::optional<dsl::AsyncCopy>>>;

  ChunkAllReduce(dsl::Kernel& k, const AgwBlocks& b, const AgwArRefs& refs, const dsl::Ref& out,
                 int64_t chunk, Stores& stores);

  void Start();
  bool Pending() const { return next_ < steps_; }
  void Advance();
  // Casts the reduced blocks to the output dtype and stores them; waits for every send.
  void Finish(bool more_chunks_reuse_slots);
  static Stores NoStores(int y) { return Stores(2, std::vector<std::optional<dsl::AsyncCopy>>(y)); }
  static void Drain(Stores& stores);

 private:
  int Mod(int v) const { return (v % n_ + n_) % n_; }
  dsl::Ref Block(int block) const { return r_.partial.at(par_, block); }
  dsl::Ref Recv(int t) const { return r_.recv.at(par_, t); }
  void Send(int t, const dsl::Ref& src);

  dsl::Kernel& k_;
  AgwBlocks b_;
  AgwArRefs r_;
  dsl::Ref out_;
  int64_t chunk_;
  int par_;
  int n_ = 1, me_ = 0, right_ = 0, left_ = 0, steps_ = 0, next_ = 0;
  Stores& stores_;
  std::vector<dsl::AsyncCopy> sends_;
};

}  // namespace tpusim::kernels
