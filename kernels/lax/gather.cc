#include "kernels/lax/gather.h"

#include <algorithm>
#include <optional>

#include "kernels/lax/views.h"
#include "kernels/ring.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

int Log2(int n) {
  int log = 0;
  while ((1 << log) < n)
    ++log;
  return log;
}

// Steps of the bidirectional gather: floor(X/2) round a closed ring, X-1 along a line.
int BidiSteps(int n, bool closed) {
  return closed ? n / 2 : n - 1;
}

// The first or second half of every view of a unit, cut along its first dimension of size
// >= 2; a view with no such dimension goes whole with the first halves.
std::vector<Ref> HalfOf(const std::vector<Ref>& unit, bool second) {
  std::vector<Ref> half;
  for (const Ref& ref : unit) {
    std::optional<int> dim;
    for (int d = 0; d < static_cast<int>(ref.shape().size()) && !dim; ++d) {
      if (ref.shape()[d] >= 2) dim = d;
    }
    if (!dim) {
      if (!second) half.push_back(ref);
      continue;
    }
    const int64_t size = ref.shape()[*dim];
    half.push_back(second ? SliceDim(ref, *dim, size / 2, size - size / 2)
                          : SliceDim(ref, *dim, 0, size / 2));
  }
  return half;
}

// Copies of every view of `views` to the same views on `device`, all on one pair of
// semaphores.
std::vector<AsyncCopy> CopiesTo(Kernel& k, const std::vector<Ref>& views, const Ref& send_sem,
                                const Ref& recv_sem, const DeviceId& device) {
  std::vector<AsyncCopy> copies;
  for (const Ref& view : views)
    copies.push_back(k.async_remote_copy(view, view, send_sem, recv_sem, device));
  return copies;
}

// Starts `sends`, waits until they have left, then waits for `arrivals` (descriptors of what
// lands here, of the sizes the senders used).
void Exchange(std::vector<AsyncCopy>& sends, std::vector<AsyncCopy>& arrivals) {
  for (AsyncCopy& c : sends)
    c.start();
  for (AsyncCopy& c : sends)
    c.wait_send();
  for (AsyncCopy& c : arrivals)
    c.wait_recv();
}

void Append(std::vector<AsyncCopy>& to, std::vector<AsyncCopy> from) {
  to.insert(to.end(), from.begin(), from.end());
}

void RingGather(Kernel& k, const Ring& ring, const Unit& unit, const Ref& send_sems,
                const Ref& recv_sems) {
  for (int step = 0; step < ring.size - 1; ++step) {
    auto scope = k.named_scope("gather step " + std::to_string(step));
    const int slot = step % kStepSemaphores;  // alternate steps, alternate semaphores
    const Ref send = send_sems.at(0, slot), recv = recv_sems.at(0, slot);
    // The unit that left device me - s reaches us now; the one from me - s - 1 next.
    std::vector<AsyncCopy> sends =
        CopiesTo(k, unit(ring.index_at(-step)), send, recv, ring.right_device());
    std::vector<AsyncCopy> arrivals =
        CopiesTo(k, unit(ring.index_at(-step - 1)), send, recv, ring.left_device());
    Exchange(sends, arrivals);
  }
}

// Step s (1-based) of the bidirectional gather. Rightwards, device i forwards the unit that
// started s-1 places to its left; leftwards, the one s-1 places to its right. Round a closed
// ring every unit travels floor((X-1)/2) hops each way, and on an even ring the unit opposite
// (s = X/2) goes half each way. Along a line a unit travels to both ends, so device i sends
// rightwards while that unit still has devices to its right, and leftwards likewise.
void BidiStep(Kernel& k, const Ring& ring, bool closed, const Unit& unit, int s,
              const Ref& send_sems, const Ref& recv_sems) {
  const int n = ring.size, me = ring.index;
  const bool halves = closed && n % 2 == 0 && s == n / 2;
  auto piece = [&](int index, bool second) {
    return halves ? HalfOf(unit(index), second) : unit(index);
  };
  const int slot = (s - 1) % kStepSemaphores;
  const Ref send_r = send_sems.at(0, slot), recv_r = recv_sems.at(0, slot);
  const Ref send_l = send_sems.at(1, slot), recv_l = recv_sems.at(1, slot);
  std::vector<AsyncCopy> sends, arrivals;
  if (closed) {
    Append(sends,
           CopiesTo(k, piece(ring.index_at(1 - s), false), send_r, recv_r, ring.right_device()));
    Append(sends,
           CopiesTo(k, piece(ring.index_at(s - 1), true), send_l, recv_l, ring.left_device()));
    Append(arrivals,
           CopiesTo(k, piece(ring.index_at(-s), false), send_r, recv_r, ring.left_device()));
    Append(arrivals,
           CopiesTo(k, piece(ring.index_at(s), true), send_l, recv_l, ring.right_device()));
  } else {
    if (me >= s - 1 && me <= n - 2)
      Append(sends, CopiesTo(k, unit(me - s + 1), send_r, recv_r, ring.right_device()));
    if (me + s - 1 <= n - 1 && me >= 1)
      Append(sends, CopiesTo(k, unit(me + s - 1), send_l, recv_l, ring.left_device()));
    if (me - s >= 0)
      Append(arrivals, CopiesTo(k, unit(me - s), send_r, recv_r, ring.left_device()));
    if (me + s <= n - 1)
      Append(arrivals, CopiesTo(k, unit(me + s), send_l, recv_l, ring.right_device()));
  }
  Exchange(sends, arrivals);
}

void DirectGather(Kernel& k, const Ring& ring, const Unit& unit, const Ref& send_sems,
                  const Ref& recv_sems) {
  auto scope = k.named_scope("direct sends");
  const Ref recv = recv_sems.at(0, 0);
  std::vector<AsyncCopy> sends, arrivals;
  for (int to : FarthestFirst(ring))
    Append(sends, CopiesTo(k, unit(ring.index), send_sems.at(0, to), recv, ring.device(to)));
  for (int from = 0; from < ring.size; ++from) {
    if (from != ring.index)
      Append(arrivals, CopiesTo(k, unit(from), send_sems.at(0, from), recv, ring.device(from)));
  }
  Exchange(sends, arrivals);
}

void RecursiveDoublingGather(Kernel& k, const Ring& ring, const Unit& unit, const Ref& send_sems,
                             const Ref& recv_sems) {
  const int me = ring.index;
  for (int bit = 0; (1 << bit) < ring.size; ++bit) {
    auto scope = k.named_scope("doubling step " + std::to_string(bit));
    const int partner = me ^ (1 << bit);
    const int mine = me & ~((1 << bit) - 1), theirs = partner & ~((1 << bit) - 1);
    const Ref send = send_sems.at(0, bit), recv = recv_sems.at(0, bit);
    std::vector<AsyncCopy> sends, arrivals;
    for (int i = 0; i < (1 << bit); ++i) {
      Append(sends, CopiesTo(k, unit(mine + i), send, recv, ring.device(partner)));
      Append(arrivals, CopiesTo(k, unit(theirs + i), send, recv, ring.device(partner)));
    }
    Exchange(sends, arrivals);
  }
}

}  // namespace

std::vector<int> FarthestFirst(const Ring& ring) {
  std::vector<int> order;
  const int n = ring.size;
  for (int hops = n / 2; hops >= 1; --hops) {
    order.push_back(ring.index_at(hops));
    if (n - hops != hops) order.push_back(ring.index_at(-hops));
  }
  return order;
}

std::vector<ScratchSpec> GatherScratch(Algorithm algorithm, int ring_size,
                                       const std::string& prefix) {
  Shape send = {1, 1}, recv = {1, 1};
  const int64_t n = std::max(ring_size, 2);
  switch (algorithm) {
    case Algorithm::kRing:  // per direction, kStepSemaphores that alternate by step
      send = recv = {1, kStepSemaphores};
      break;
    case Algorithm::kBidiRing:
      send = recv = {2, kStepSemaphores};
      break;
    case Algorithm::kDirect:
      send = {1, n};
      break;
    case Algorithm::kRecursiveDoubling:
      send = recv = {1, std::max(Log2(static_cast<int>(n)), 1)};
      break;
  }
  return {ScratchSpec::DMA(send, prefix + "send"), ScratchSpec::DMA(recv, prefix + "recv")};
}

Peers PeersOf(Algorithm algorithm, const Ring& ring, bool closed) {
  Peers p;
  const int n = ring.size, me = ring.index;
  if (n < 2) return p;
  switch (algorithm) {
    case Algorithm::kRing:
      p.senders = {ring.index_at(-1)};
      p.receivers = {ring.index_at(1)};
      break;
    case Algorithm::kBidiRing:
      if (closed || n == 2) {
        p.senders = p.receivers = {ring.index_at(-1), ring.index_at(1)};
      } else {
        if (me > 0) p.senders.push_back(me - 1);
        if (me < n - 1) p.senders.push_back(me + 1);
        p.receivers = p.senders;
      }
      break;
    case Algorithm::kDirect:
      for (int i = 0; i < n; ++i) {
        if (i != me) p.senders.push_back(i);
      }
      p.receivers = p.senders;
      break;
    case Algorithm::kRecursiveDoubling:
      for (int bit = 0; (1 << bit) < n; ++bit)
        p.senders.push_back(me ^ (1 << bit));
      p.receivers = p.senders;
      break;
  }
  return p;
}

void SignalPeers(Kernel& k, const Ring& ring, const Peers& peers, const Ref& sem) {
  for (int i : peers.senders)
    k.signal(sem, 1, ring.device(i));
}

void WaitForPeers(Kernel& k, const Peers& peers, const Ref& sem) {
  if (!peers.receivers.empty()) k.wait(sem, static_cast<int64_t>(peers.receivers.size()));
}

void Gather(Kernel& k, Algorithm algorithm, const Ring& ring, bool closed, const Unit& unit,
            const Ref& send_sems, const Ref& recv_sems) {
  if (ring.size < 2) return;
  switch (algorithm) {
    case Algorithm::kRing:
      RingGather(k, ring, unit, send_sems, recv_sems);
      break;
    case Algorithm::kBidiRing: {
      const bool round = closed || ring.size == 2;
      for (int s = 1; s <= BidiSteps(ring.size, round); ++s) {
        auto scope = k.named_scope("gather step " + std::to_string(s - 1));
        BidiStep(k, ring, round, unit, s, send_sems, recv_sems);
      }
      break;
    }
    case Algorithm::kDirect:
      DirectGather(k, ring, unit, send_sems, recv_sems);
      break;
    case Algorithm::kRecursiveDoubling:
      RecursiveDoublingGather(k, ring, unit, send_sems, recv_sems);
      break;
  }
}

}  // namespace tpusim::kernels::lax
