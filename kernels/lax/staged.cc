#include "kernels/lax/staged.h"

#include <algorithm>

#include "kernels/lax/gather.h"
#include "kernels/lax/views.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

constexpr uint64_t kMaxSlotBytes = 4ull << 20;

int Log2(int n) {
  int log = 0;
  while ((1 << log) < n)
    ++log;
  return log;
}

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// One round's part of a [rows, cols] payload, or of a [cols] one (flat).
struct Box {
  int64_t row, rows, col, cols;
  bool flat = false;
  Ref Of(const Ref& ref) const {
    return flat ? ref.at(ds(col, cols)) : ref.at(ds(row, rows), ds(col, cols));
  }
  // The same shape at the start of a [R, C] slot.
  Ref In(const Ref& slot) const {
    return flat ? slot.at(0, ds(0, cols)) : slot.at(ds(0, rows), ds(0, cols));
  }
};

std::vector<Box> Rounds(const StagedPlan& p, bool flat) {
  std::vector<Box> boxes;
  for (int64_t row = 0; row < p.rows; row += p.rows_per_round) {
    for (int64_t col = 0; col < p.cols; col += p.cols_per_round) {
      boxes.push_back(Box{row, std::min(p.rows_per_round, p.rows - row), col,
                          std::min(p.cols_per_round, p.cols - col), flat});
    }
  }
  return boxes;
}

struct Scratch {
  Ref stage, acc, send, recv, local, ready;
};

Scratch ScratchOf(Kernel& k, const std::string& prefix) {
  return {k.ref(prefix + "stage"), k.ref(prefix + "acc"),   k.ref(prefix + "send"),
          k.ref(prefix + "recv"),  k.ref(prefix + "local"), k.ref(prefix + "ready")};
}

void DirectRound(Kernel& k, const Ring& ring, const Box& box, Reduction reduction,
                 const Payload& payload, const Ref& out, const Scratch& s) {
  const int me = ring.index, n = ring.size;
  auto slot = [&](int j) { return box.In(s.stage.at(j)); };
  AsyncCopy own = k.async_copy(box.Of(payload(me)), slot(me), s.local);
  own.start();
  std::vector<AsyncCopy> sends;
  for (int to : FarthestFirst(ring)) {
    sends.push_back(
        k.async_remote_copy(box.Of(payload(to)), slot(me), s.send.at(to), s.recv, ring.device(to)));
    sends.back().start();
  }
  own.wait();
  for (AsyncCopy& c : sends)
    c.wait_send();
  // Every slot that lands here has one size: wait for each with our own descriptor.
  for (int i = 1; i < n; ++i) {
    k.async_remote_copy(slot(me), slot(me), s.send.at(me), s.recv, ring.device(me)).wait_recv();
  }
  const Ref acc = box.In(s.acc);
  if (n == 1) {
    CopyLocal(k, slot(0), box.Of(out), s.local);
    return;
  }
  Combine(k, reduction, acc, slot(0), slot(1));
  for (int j = 2; j < n; ++j)
    Combine(k, reduction, acc, acc, slot(j));
  CopyLocal(k, acc, box.Of(out), s.local);
}

void DoublingRound(Kernel& k, const Ring& ring, const Box& box, Reduction reduction, const Ref& in,
                   const Ref& out, const Scratch& s) {
  const int me = ring.index;
  const Ref acc = box.In(s.acc);
  CopyLocal(k, box.Of(in), acc, s.local);
  for (int bit = 0; (1 << bit) < ring.size; ++bit) {
    const int partner = me ^ (1 << bit);
    const Ref slot = box.In(s.stage.at(bit));
    AsyncCopy send =
        k.async_remote_copy(acc, slot, s.send.at(bit), s.recv.at(bit), ring.device(partner));
    send.start();
    send.wait_send();  // acc is combined into next: its bytes must have left
    send.wait_recv();  // the partner's acc, in our slot (the same size as ours)
    // The lower index's value first on both partners: identical results, for any reduction.
    if (me < partner) {
      Combine(k, reduction, acc, acc, slot);
    } else {
      Combine(k, reduction, acc, slot, acc);
    }
  }
  CopyLocal(k, acc, box.Of(out), s.local);
}

}  // namespace

int StagedPlan::slots() const {
  return algorithm == Algorithm::kRecursiveDoubling ? std::max(Log2(ring_size), 1)
                                                    : std::max(ring_size, 1);
}

StagedPlan PlanStaged(const Mesh& mesh, DType dtype, Algorithm algorithm, int ring_size,
                      int64_t rows, int64_t cols, double vmem_share) {
  StagedPlan p;
  p.algorithm = algorithm;
  p.ring_size = ring_size;
  p.rows = std::max<int64_t>(rows, 1);
  p.cols = std::max<int64_t>(cols, 1);
  const uint64_t vmem = mesh.topology().chip().vmem().capacity_bytes();
  const uint64_t slot_bytes = std::min<uint64_t>(
      kMaxSlotBytes, static_cast<uint64_t>(static_cast<double>(vmem) * vmem_share) /
                         static_cast<uint64_t>(p.slots() + 1));
  const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(slot_bytes / SizeOf(dtype)));
  if (p.cols <= chunk) {
    p.cols_per_round = p.cols;
    p.rows_per_round = std::clamp<int64_t>(chunk / p.cols, 1, p.rows);
  } else {
    p.rows_per_round = 1;
    p.cols_per_round = CeilDiv(p.cols, CeilDiv(p.cols, chunk));
  }
  return p;
}

std::vector<ScratchSpec> StagedScratch(const StagedPlan& plan, DType dtype,
                                       const std::string& prefix) {
  const int64_t slots = plan.slots();
  const Shape slot = {plan.rows_per_round, plan.cols_per_round};
  const Shape stage = {slots, plan.rows_per_round, plan.cols_per_round};
  const bool doubling = plan.algorithm == Algorithm::kRecursiveDoubling;
  return {
      ScratchSpec::VMEM(stage, dtype, prefix + "stage"),
      ScratchSpec::VMEM(slot, dtype, prefix + "acc"),
      ScratchSpec::DMA({slots}, prefix + "send"),
      doubling ? ScratchSpec::DMA({slots}, prefix + "recv") : ScratchSpec::DMA({}, prefix + "recv"),
      ScratchSpec::DMA({}, prefix + "local"),
      ScratchSpec::REGULAR({}, prefix + "ready")};
}

void StagedReduce(Kernel& k, const Ring& ring, const StagedPlan& plan, Reduction reduction,
                  const Payload& payload, const Ref& out, const std::string& prefix) {
  const Scratch s = ScratchOf(k, prefix);
  const Peers peers = PeersOf(plan.algorithm, ring, /*closed=*/true);
  const std::vector<Box> rounds = Rounds(plan, out.shape().size() == 1);
  for (size_t r = 0; r < rounds.size(); ++r) {
    auto scope =
        k.named_scope(std::string(AlgorithmName(plan.algorithm)) + " round " + std::to_string(r));
    if (r > 0) {
      // Our slots are combined: our senders may refill them once we have their word that
      // theirs are too.
      SignalPeers(k, ring, peers, s.ready);
      WaitForPeers(k, peers, s.ready);
    }
    if (plan.algorithm == Algorithm::kRecursiveDoubling) {
      DoublingRound(k, ring, rounds[r], reduction, payload(ring.index), out, s);
    } else {
      DirectRound(k, ring, rounds[r], reduction, payload, out, s);
    }
  }
}

}  // namespace tpusim::kernels::lax
