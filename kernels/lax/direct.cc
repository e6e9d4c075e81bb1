// lax.ppermute and lax.all_to_all: direct algorithms (see collectives.h). Each block goes
// straight to its destination in one remote DMA, routed the shorter way round the axis.

#include <algorithm>
#include <memory>
#include <optional>

#include "kernels/lax/calls.h"
#include "kernels/lax/gather.h"
#include "kernels/lax/views.h"
#include "kernels/ring.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

// Most bytes of zeros ppermute stages in VMEM to clear an output nobody sends to.
constexpr uint64_t kZeroChunkBytes = 1ull << 20;

GridSpec AnyOperands(std::vector<ScratchSpec> scratch) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = std::move(scratch);
  return grid;
}

// out = 0, from a zeroed VMEM chunk copied over it piece by piece.
void Zero(Kernel& k, const Ref& out, const Ref& zeros, const Ref& sem) {
  auto scope = k.named_scope("zeros");
  const int64_t n = out.size();
  const Ref flat = Reshape(out, {n});
  const int64_t chunk = zeros.size();
  k.fill(zeros, 0);
  std::vector<AsyncCopy> copies;
  for (int64_t at = 0; at < n; at += chunk) {
    const int64_t size = std::min(chunk, n - at);
    copies.push_back(k.async_copy(zeros.at(ds(0, size)), flat.at(ds(at, size)), sem));
    copies.back().start();
  }
  for (AsyncCopy& c : copies)
    c.wait();
}

}  // namespace

PallasCall MakePpermute(const Mesh&, const CollectiveSpec& spec, const ShapeDtype& x,
                        const CollectivePlan& plan) {
  const std::shared_ptr<const DeviceGroups> groups = plan.stages[0].groups;
  const int n = groups->group_size();
  std::vector<int> destination(n, -1), source(n, -1);
  for (const auto& [s, d] : spec.perm) {
    destination[s] = d;
    source[d] = s;
  }
  const bool zeros_needed = std::count(source.begin(), source.end(), -1) > 0;
  const int64_t elements = NumElements(x.shape);
  const int64_t zero_chunk = std::clamp<int64_t>(
      static_cast<int64_t>(kZeroChunkBytes / SizeOf(x.dtype)), 1, std::max<int64_t>(elements, 1));
  KernelFn kernel = [groups, destination, source](Kernel& k, const Refs&) {
    const Ref &x = k.ref("x"), &out = k.ref("out");
    const Ref &send_sem = k.ref("send_sem"), &recv_sem = k.ref("recv_sem");
    const Ref& local_sem = k.ref("local_sem");
    const Ring ring = groups->RingOf(k.device_id());
    const int me = ring.index;
    const int to = destination[me];
    const int from = source[me];
    // Only our source writes to us: tell it we are here, and wait for our destination.
    const Ref barrier = k.barrier_semaphore();
    if (from >= 0 && from != me) k.signal(barrier, 1, ring.device(from));
    if (to >= 0 && to != me) k.wait(barrier, 1);
    std::optional<AsyncCopy> send;
    if (to == me) {
      CopyLocal(k, x, out, local_sem);
    } else if (to >= 0) {
      send = k.async_remote_copy(x, out, send_sem, recv_sem, ring.device(to));
      send->start();
    }
    if (from < 0) Zero(k, out, k.ref("zeros"), local_sem);
    if (send) send->wait_send();
    if (from >= 0 && from != me) {
      // Our own descriptor of the same size: the source's copy lands on our semaphore.
      k.async_remote_copy(x, out, send_sem, recv_sem, ring.device(from)).wait_recv();
    }
  };
  GridSpec grid =
      AnyOperands({ScratchSpec::DMA({}, "send_sem"), ScratchSpec::DMA({}, "recv_sem"),
                   ScratchSpec::DMA({}, "local_sem"),
                   ScratchSpec::VMEM({zeros_needed ? zero_chunk : 1}, x.dtype, "zeros")});
  return pallas_call("ppermute", std::move(kernel), grid, {x});
}

PallasCall MakeAllToAll(const Mesh&, const CollectiveSpec& spec, const ShapeDtype& x,
                        const ShapeDtype& out, const CollectivePlan& plan) {
  const std::shared_ptr<const DeviceGroups> groups = plan.stages[0].groups;
  const int n = groups->group_size();
  const int split = spec.axis;
  const int concat = spec.concat_axis;
  const bool tiled = spec.tiled;
  const int64_t split_tile = tiled ? x.shape[split] / n : 1;
  const int64_t concat_tile = tiled ? out.shape[concat] / n : 1;
  KernelFn kernel = [=](Kernel& k, const Refs&) {
    const Ref &x = k.ref("x"), &out = k.ref("out");
    const Ref &send_sems = k.ref("send_sems"), &recv_sem = k.ref("recv_sem");
    const Ring ring = groups->RingOf(k.device_id());
    const int me = ring.index;
    // Chunk j of x goes to device j; the chunk from device i lands at block i of out.
    auto chunk = [&](int j) {
      return tiled ? SliceDim(x, split, j * split_tile, split_tile) : IndexDim(x, split, j);
    };
    auto block = [&](int i) {
      return tiled ? SliceDim(out, concat, i * concat_tile, concat_tile) : IndexDim(out, concat, i);
    };
    AsyncCopy own = k.async_copy(chunk(me), block(me), k.ref("local_sem"));
    own.start();
    MeetEveryoneOnRing(k, ring);  // everyone on the ring writes to us
    std::vector<AsyncCopy> sends;
    {
      auto scope = k.named_scope("send chunks");
      for (int to : FarthestFirst(ring)) {
        sends.push_back(
            k.async_remote_copy(chunk(to), block(me), send_sems.at(to), recv_sem, ring.device(to)));
        sends.back().start();
      }
    }
    own.wait();
    for (AsyncCopy& s : sends)
      s.wait_send();
    // Every chunk that lands here has one size: wait for each with our own descriptor.
    for (int d = 1; d < n; ++d)
      k.async_remote_copy(chunk(me), block(me), send_sems.at(me), recv_sem, ring.device(me))
          .wait_recv();
  };
  GridSpec grid = AnyOperands({ScratchSpec::DMA({n}, "send_sems"), ScratchSpec::DMA({}, "recv_sem"),
                               ScratchSpec::DMA({}, "local_sem")});
  return pallas_call("all_to_all", std::move(kernel), grid, {out});
}

}  // namespace tpusim::kernels::lax
