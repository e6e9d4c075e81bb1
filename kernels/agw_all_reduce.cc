#include "kernels/agw_all_reduce.h"

#include <string>

namespace tpusim::kernels {

using namespace dsl;

AgwArRefs AgwArRefs::Of(const Kernel& k) {
  return AgwArRefs{k.ref("partial"),      k.ref("ar_recv"),   k.ref("ar_send_sems"),
                   k.ref("ar_recv_sems"), k.ref("ar_credit"), k.ref("out_vmem"),
                   k.ref("store_sems")};
}

std::vector<ScratchSpec> AgwArRefs::Scratch(const AgwBlocks& b) {
  const int64_t steps = b.ar_steps();
  return {
      ScratchSpec::VMEM({2, b.y, b.bm, b.nb}, b.acc_dtype(), "partial"),
      ScratchSpec::VMEM({2, steps, b.bm, b.nb}, b.acc_dtype(), "ar_recv"),
      ScratchSpec::DMA({2, steps}, "ar_send_sems"),
      ScratchSpec::DMA({2, steps}, "ar_recv_sems"),
      ScratchSpec::REGULAR({2}, "ar_credit"),
      ScratchSpec::VMEM({2, b.y, b.bm, b.nb}, b.out_dtype(), "out_vmem"),
      ScratchSpec::DMA({2, b.y}, "store_sems"),
  };
}

ChunkAllReduce::ChunkAllReduce(Kernel& k, const AgwBlocks& b, const AgwArRefs& refs, const Ref& out,
                               int64_t chunk, Stores& stores)
    : k_(k),
      b_(b),
      r_(refs),
      out_(out),
      chunk_(chunk),
      par_(static_cast<int>(chunk % 2)),
      stores_(stores) {
  const Ring ring = k.ring(b.y_axis);
  n_ = ring.size;
  me_ = ring.index;
  right_ = ring.index_at(1);
  left_ = ring.index_at(-1);
  steps_ = 2 * (n_ - 1);
}

void ChunkAllReduce::Start() {
  if (n_ == 1) return;
  // The right neighbour's slots of this parity held chunk - 2 until it finished it.
  if (chunk_ >= 2) k_.wait(r_.credit.at(par_), 1);
  Send(0, Block(me_));
}

void ChunkAllReduce::Advance() {
  const int t = next_++;
  auto scope =
      k_.named_scope("all-reduce chunk " + std::to_string(chunk_) + " step " + std::to_string(t));
  // Our own descriptor of the same size: the left neighbour's step t send lands here.
  AsyncCopy incoming = k_.async_remote_copy(Recv(t), Recv(t), r_.send_sems.at(par_, t),
                                            r_.recv_sems.at(par_, t), {{b_.y_axis, left_}});
  incoming.wait_recv();
  if (t < n_ - 1) {
    // Reduce-scatter: the partial sum of block me-1-t arrived; add ours.
    const Ref sum = Block(Mod(me_ - 1 - t));
    k_.add(sum, sum, Recv(t));
    // Pass it on; after the last add it is fully reduced (block me+1) and starts the
    // all-gather.
    Send(t + 1, sum);
  } else if (t + 1 < steps_) {
    Send(t + 1, Recv(t));  // all-gather: pass the reduced block on
  }
}

void ChunkAllReduce::Finish(bool more_chunks_reuse_slots) {
  while (Pending())
    Advance();
  for (int u = 0; u < n_; ++u) {
    const int block = Mod(me_ + 1 - u);  // reduced here (u = 0) or arrived at AG step u-1
    const Ref reduced = u == 0 ? Block(block) : Recv(n_ - 1 + u - 1);
    if (stores_[par_][block]) stores_[par_][block]->wait();
    stores_[par_][block].reset();
    const Ref staged = r_.out_vmem.at(par_, block);
    k_.cast(staged, reduced);
    AsyncCopy store =
        k_.async_copy(staged, out_.at(ds(0, b_.bm), ds(chunk_ * b_.nc + block * b_.nb, b_.nb)),
                      r_.store_sems.at(par_, block));
    store.start();
    stores_[par_][block] = store;
  }
  for (auto& send : sends_)
    send.wait_send();
  sends_.clear();
  // Our slots of this parity are read: the left neighbour may fill them with chunk + 2.
  if (n_ > 1 && more_chunks_reuse_slots) k_.signal(r_.credit.at(par_), 1, {{b_.y_axis, left_}});
}

void ChunkAllReduce::Drain(Stores& stores) {
  for (auto& parity : stores) {
    for (auto& store : parity) {
      if (store) store->wait();
      store.reset();
    }
  }
}

void ChunkAllReduce::Send(int t, const Ref& src) {
  AsyncCopy send = k_.async_remote_copy(src, Recv(t), r_.send_sems.at(par_, t),
                                        r_.recv_sems.at(par_, t), {{b_.y_axis, right_}});
  send.start();
  sends_.push_back(send);
}

}  // namespace tpusim::kernels
