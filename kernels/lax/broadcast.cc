// XLA's collective-broadcast (see collectives.h): the first device of each group, its root,
// sends its x to every member of the group. Every member waits for its data with a
// descriptor of the same size on its own receive semaphore; the members tell whoever sends
// to them that they are there before anything is sent.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/lax/calls.h"
#include "kernels/lax/gather.h"
#include "kernels/lax/views.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

// Whom a member of the binomial tree receives from and sends to, as ring indices: the
// distances halve from X/2, so device i (i > 0) gets x from i with its lowest set bit
// cleared, and then sends it on at every smaller power of two.
struct TreeLinks {
  int parent = -1;
  std::vector<int> children;  // farthest first
};

TreeLinks TreeOf(int me, int n) {
  TreeLinks t;
  const int low = me == 0 ? n : (me & -me);
  if (me > 0) t.parent = me & (me - 1);
  for (int d = low / 2; d >= 1; d /= 2)
    t.children.push_back(me + d);
  return t;
}

// recursive_doubling: log2 X steps of the tree; a device sends what it received.
void Tree(Kernel& k, const Ring& ring, const Ref& x, const Ref& out) {
  const Ref &send_sems = k.ref("send_sems"), &recv_sem = k.ref("recv_sem");
  const TreeLinks t = TreeOf(ring.index, ring.size);
  const Ref barrier = k.barrier_semaphore();
  if (t.parent >= 0) k.signal(barrier, 1, ring.device(t.parent));
  if (!t.children.empty()) k.wait(barrier, static_cast<int64_t>(t.children.size()));
  std::optional<AsyncCopy> own;
  if (t.parent < 0) {
    own = k.async_copy(x, out, k.ref("local_sem"));
    own->start();
  } else {
    auto scope = k.named_scope("receive");
    k.async_remote_copy(out, out, send_sems.at(ring.index), recv_sem, ring.device(t.parent))
        .wait_recv();
  }
  const Ref& from = t.parent < 0 ? x : out;
  for (int child : t.children) {
    auto scope = k.named_scope("tree step to +" + std::to_string(child - ring.index));
    AsyncCopy send =
        k.async_remote_copy(from, out, send_sems.at(child), recv_sem, ring.device(child));
    send.start();
    send.wait_send();
  }
  if (own) own->wait();
}

// direct: the root sends x to every member at once.
void Direct(Kernel& k, const Ring& ring, const Ref& x, const Ref& out) {
  const Ref &send_sems = k.ref("send_sems"), &recv_sem = k.ref("recv_sem");
  const Ref barrier = k.barrier_semaphore();
  if (ring.index > 0) {
    k.signal(barrier, 1, ring.device(0));
    k.async_remote_copy(out, out, send_sems.at(ring.index), recv_sem, ring.device(0)).wait_recv();
    return;
  }
  AsyncCopy own = k.async_copy(x, out, k.ref("local_sem"));
  own.start();
  k.wait(barrier, ring.size - 1);
  std::vector<AsyncCopy> sends;
  {
    auto scope = k.named_scope("direct sends");
    for (int to : FarthestFirst(ring)) {
      sends.push_back(k.async_remote_copy(x, out, send_sems.at(to), recv_sem, ring.device(to)));
      sends.back().start();
    }
  }
  own.wait();
  for (AsyncCopy& s : sends)
    s.wait_send();
}

// ring, bidi_ring: the root scatters x's X blocks (of flat elements [i e/X, (i+1) e/X)), one
// to each member, then the members all-gather the blocks.
void ScatterGather(Kernel& k, const Ring& ring, Algorithm algorithm, bool closed, int64_t elements,
                   const Ref& x, const Ref& out) {
  const Ref &send_sems = k.ref("send_sems"), &recv_sem = k.ref("recv_sem");
  const Ref flat_x = Reshape(x, {elements}), flat_out = Reshape(out, {elements});
  const int n = ring.size, me = ring.index;
  auto block = [&](const Ref& flat, int i) {
    const int64_t lo = i * elements / n, hi = (i + 1) * elements / n;
    return hi > lo ? std::vector<Ref>{flat.at(ds(lo, hi - lo))} : std::vector<Ref>{};
  };
  // One barrier for both phases: every device waits for all it will send to.
  const Peers peers = PeersOf(algorithm, ring, closed);
  const Ref barrier = k.barrier_semaphore();
  SignalPeers(k, ring, peers, barrier);
  if (me > 0) k.signal(barrier, 1, ring.device(0));
  const int64_t waits = static_cast<int64_t>(peers.receivers.size()) + (me == 0 ? n - 1 : 0);
  if (waits > 0) k.wait(barrier, waits);
  if (me == 0) {
    auto scope = k.named_scope("scatter");
    std::vector<AsyncCopy> own, sends;
    for (const Ref& b : block(flat_x, 0)) {
      own.push_back(k.async_copy(b, block(flat_out, 0)[0], k.ref("local_sem")));
      own.back().start();
    }
    for (int to : FarthestFirst(ring)) {
      for (const Ref& b : block(flat_x, to)) {
        sends.push_back(k.async_remote_copy(b, block(flat_out, to)[0], send_sems.at(to), recv_sem,
                                            ring.device(to)));
        sends.back().start();
      }
    }
    for (AsyncCopy& c : own)
      c.wait();
    for (AsyncCopy& s : sends)
      s.wait_send();
  } else {
    auto scope = k.named_scope("receive block");
    for (const Ref& b : block(flat_out, me))
      k.async_remote_copy(b, b, send_sems.at(me), recv_sem, ring.device(0)).wait_recv();
  }
  auto scope = k.named_scope(std::string(AlgorithmName(algorithm)) + " gather");
  Gather(
      k, algorithm, ring, closed, [&](int i) { return block(flat_out, i); }, k.ref("g_send"),
      k.ref("g_recv"));
}

}  // namespace

PallasCall MakeBroadcast(const Mesh&, const CollectiveSpec&, const ShapeDtype& x,
                         const CollectivePlan& plan) {
  const std::shared_ptr<const DeviceGroups> groups = plan.stages[0].groups;
  const Algorithm algorithm = plan.stages[0].algorithm;
  const bool closed = plan.stages[0].closed;
  const int n = groups->group_size();
  const int64_t elements = NumElements(x.shape);
  KernelFn kernel = [=](Kernel& k, const Refs&) {
    const Ref &x = k.ref("x"), &out = k.ref("out");
    const Ring ring = groups->RingOf(k.device_id());
    if (ring.size < 2) {
      CopyLocal(k, x, out, k.ref("local_sem"));
      return;
    }
    if (elements == 0) return;
    switch (algorithm) {
      case Algorithm::kDirect:
        Direct(k, ring, x, out);
        break;
      case Algorithm::kRecursiveDoubling:
        Tree(k, ring, x, out);
        break;
      case Algorithm::kRing:
      case Algorithm::kBidiRing:
        ScatterGather(k, ring, algorithm, closed, elements, x, out);
        break;
    }
  };
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "local_sem"),
                         ScratchSpec::DMA({std::max(n, 1)}, "send_sems"),
                         ScratchSpec::DMA({}, "recv_sem")};
  for (ScratchSpec& s : GatherScratch(algorithm, n, "g_"))
    grid.scratch_shapes.push_back(std::move(s));
  return pallas_call("collective_broadcast", std::move(kernel), grid, {x});
}

}  // namespace tpusim::kernels::lax
