// psum in the style of the Pallas distributed-TPU guide's all-reduce: X grid steps (per
// VMEM-sized piece of the input); at each step every device passes the buffer it received
// last step on to its right neighbour and adds it into an f32 accumulator, so after X-1
// passes every device has added every input.
//
// The buffer is double-buffered: a device works on one slot while its left neighbour
// fills the other. Nothing else ties a device to its left neighbour, so a left neighbour
// one step ahead would fill the slot this device is still adding from or sending
// (docs/references.md §5). Each step therefore starts with a REGULAR capacity semaphore:
// signal the left "my other slot is free", and wait for the right's signal before
// sending. all_reduce_psum_no_capacity drops that handshake ON PURPOSE, to show the
// hazard: it is right while all chips run at one speed and wrong once one chip is slow.
//
// Every input crosses X-1 links, so the schedule needs about X/2 times the all-reduce
// bound; compare it with all_reduce_ring, which moves each byte twice.

#include <algorithm>
#include <optional>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "kernels/ring.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;

KernelFn Psum(std::string axis, int64_t elements, int64_t piece, DType dtype, bool capacity) {
  return [=](Kernel& k, const Refs&) {
    const Ref& x = k.ref("x");
    const Ref& out = k.ref("out");
    const Ref& buf = k.ref("buf");        // VMEM [2, piece]: working slot and receiving slot
    const Ref& acc = k.ref("acc");        // VMEM f32 [piece]
    const Ref& result = k.ref("result");  // VMEM [piece] in the output dtype (bf16 outputs)
    const Ref& load_sem = k.ref("load_sem");
    const Ref& store_sem = k.ref("store_sem");
    const Ref& send_sem = k.ref("send_sem");
    const Ref& recv_sems =
        k.ref("recv_sems");  // one per slot: a slot is filled by one DMA at a time
    const Ref& capacity_sem = k.ref("capacity_sem");
    const Ring ring = k.ring(axis);
    const int n = ring.size;
    const DeviceId right = ring.right_device(), left = ring.left_device();
    const int round = k.program_id(0);
    const int step = k.program_id(1);
    const int64_t begin = round * piece;
    const int64_t size = std::min(piece, elements - begin);
    // Slots alternate with the global step, across rounds too.
    const int64_t global_step = static_cast<int64_t>(round) * n + step;
    const int working = static_cast<int>(global_step % 2);
    const int receiving = 1 - working;
    auto slot = [&](int s) { return buf.at(s, ds(0, size)); };
    const Ref sum = acc.at(ds(0, size));

    if (global_step == 0 && n > 1) {
      MeetRingNeighbours(k, axis);
    }
    if (step == 0) {
      auto scope = k.named_scope("load own piece");
      AsyncCopy load = k.async_copy(x.at(ds(begin, size)), slot(working), load_sem);
      load.start();
      k.fill(sum, 0);
      load.wait();
    }

    const bool pass_on = step < n - 1;  // the last step's buffer has gone all the way round
    std::optional<AsyncCopy> send;
    if (pass_on) {
      if (capacity) {
        auto scope = k.named_scope("capacity");
        // Our receiving slot was last read at the previous step, which is over: the left
        // neighbour may fill it. Then wait until the right neighbour says the same.
        k.signal(capacity_sem, 1, left);
        k.wait(capacity_sem, 1);
      }
      send = k.async_remote_copy(slot(working), slot(receiving), send_sem, recv_sems.at(receiving),
                                 right);
      send->start();
    }
    // Add while the same slot streams out to the right.
    k.add(sum, sum, slot(working));
    if (pass_on) {
      send->wait_send();
      send->wait_recv();  // the left neighbour's buffer is in our receiving slot
    }

    if (step == n - 1) {
      auto scope = k.named_scope("store");
      Ref stored = sum;
      if (dtype != DType::kF32) {
        stored = result.at(ds(0, size));
        k.cast(stored, sum);
      }
      AsyncCopy store = k.async_copy(stored, out.at(ds(begin, size)), store_sem);
      store.start();
      store.wait();
    }
  };
}

Workload MakeWith(const Mesh& mesh, const Params& params, bool capacity) {
  const CollectiveProblem problem = CollectiveProblemOf(params);
  const int64_t elements = CheckReductionProblem(mesh, problem);
  const int n = mesh.AxisSize(problem.axis);
  const uint64_t esize = SizeOf(problem.dtype);
  // Two slots and a result row in the dtype, an f32 accumulator: half of VMEM at most.
  const int64_t piece_elements =
      params.Has("chunk_bytes")
          ? ChunkElements(params.Bytes("chunk_bytes"), problem.dtype)
          : static_cast<int64_t>(mesh.topology().chip().vmem().capacity_bytes() / 2 /
                                 (3 * esize + 4));
  const int64_t piece = std::clamp<int64_t>(piece_elements, 1, elements);
  const int rounds = static_cast<int>((elements + piece - 1) / piece);
  const int64_t result_row = problem.dtype == DType::kF32 ? 1 : piece;
  GridSpec grid;
  grid.grid = {rounds, n};
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::VMEM({2, piece}, problem.dtype, "buf"),
                         ScratchSpec::VMEM({piece}, DType::kF32, "acc"),
                         ScratchSpec::VMEM({result_row}, problem.dtype, "result"),
                         ScratchSpec::DMA({}, "load_sem"),
                         ScratchSpec::DMA({}, "store_sem"),
                         ScratchSpec::DMA({}, "send_sem"),
                         ScratchSpec::DMA({2}, "recv_sems"),
                         ScratchSpec::REGULAR({}, "capacity_sem")};
  PallasCall call = pallas_call(capacity ? "all_reduce_psum" : "all_reduce_psum_no_capacity",
                                Psum(problem.axis, elements, piece, problem.dtype, capacity), grid,
                                {{{elements}, problem.dtype}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.dimension_semantics = {"arbitrary", "arbitrary"};
  call.compiler_params.collective_id = 0;  // for its start barrier
  return ReductionWorkload(mesh, problem, /*replicated=*/true, std::move(call));
}

KernelInfo Variant(std::string name, std::string summary, bool capacity) {
  return {std::move(name),
          std::move(summary),
          ParamList(ReductionParams(),
                    ChunkBytesParam("the most bytes of the input one grid step passes round the "
                                    "ring (its VMEM slots hold that much)",
                                    "half of VMEM over two slots, a result row and an f32 "
                                    "accumulator")),
          [capacity](const Mesh& mesh, const Params& params) {
            return MakeWith(mesh, params, capacity);
          },
          RingAllReduceBound,
          AllReduceBusFactor};
}

const Registration registration(
    Variant("all_reduce_psum",
            "Pallas-guide psum: inputs pass round the ring X-1 times into an f32 accumulator; "
            "double-buffered, REGULAR capacity semaphores",
            true));
const Registration broken_registration(
    Variant("all_reduce_psum_no_capacity",
            "BROKEN ON PURPOSE (teaching example): all_reduce_psum without its capacity "
            "semaphores; gives wrong data when one chip runs slow",
            false));

}  // namespace
}  // namespace tpusim::kernels
