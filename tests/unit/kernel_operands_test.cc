// Named operands (Kernel::ref, refs, operands) and ring neighbours (Kernel::ring): what a
// kernel body binds is the call's operand of that name, and a ring's neighbours are the
// logical ids of the devices next to this one along the axis.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/ring.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

// x -> out on every device of a 2-chip ring, through the local semaphore `sem`.
ShardMap CopyProgram(KernelFn body) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "sem"), ScratchSpec::VMEM({8, 128}, DType::kF32)};
  PallasCall call = pallas_call("copy", std::move(body), grid, {{{256}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  return shard_map(Mesh(testing::MakeTopology({2}, {false})), {P{"x"}}, {P{"x"}}, call);
}

void Copy(Kernel& k, const Ref& x, const Ref& out, const Ref& sem) {
  AsyncCopy copy = k.async_copy(x, out, sem);
  copy.start();
  copy.wait();
}

// Each binding style must reach the call's operands: the copy lands only if x, out and sem
// are the right refs, and the names seen are the call's (an unnamed scratch is "scratch1").
void ExpectCopies(KernelFn body) {
  const Array x = Array::Random({512}, DType::kF32, 3);
  auto run = testing::RunAndCheckTrace(CopyProgram(std::move(body)), {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(CompareExact(run.result.outputs[0], x).equal);
}

TEST(NamedOperands, ByNameReachesTheCallsOperands) {
  std::vector<std::string> seen;
  ExpectCopies([&seen](Kernel& k, const Refs&) {
    const Ref& x = k.ref("x");
    const auto [out, sem] = k.refs("out", "sem");
    seen = {x.name(), out.name(), sem.name(), k.ref("scratch1").name()};
    Copy(k, x, out, sem);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "out", "sem", "scratch1"}));
}

TEST(NamedOperands, PositionallyIntoNamesOrAStructInCallOrder) {
  std::vector<std::string> seen;
  ExpectCopies([&seen](Kernel& k, const Refs&) {
    const auto [x, out, sem, vmem] = k.operands<4>();
    seen = {x.name(), out.name(), sem.name(), vmem.name()};
    Copy(k, x, out, sem);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "out", "sem", "scratch1"}));

  struct Operands {
    Ref x, out, sem, vmem;
  };
  ExpectCopies([&seen](Kernel& k, const Refs&) {
    const auto r = k.operands<Operands>();
    seen = {r.x.name(), r.out.name(), r.sem.name(), r.vmem.name()};
    Copy(k, r.x, r.out, r.sem);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "out", "sem", "scratch1"}));
}

// On a 2 x 4 mesh (logical id = 4 i + j), every device's ring along each axis.
TEST(Ring, NeighboursAreLogicalIdsAlongTheAxisWrappingAround) {
  std::map<int, std::vector<int>> seen;  // device -> y: size, index, left, right; x: same
  GridSpec grid;
  PallasCall call = pallas_call(
      "rings",
      [&seen](Kernel& k, const Refs&) {
        std::vector<int>& s = seen[k.device_id()];
        for (const char* axis : {"y", "x"}) {
          const Ring r = k.ring(axis);
          s.insert(s.end(), {r.size, r.index, r.left, r.right, r.index_at(-5), r.index_at(6)});
        }
      },
      grid, {{{1}, DType::kF32}});
  const Mesh mesh(testing::MakeTopology({2, 4}, {false, true}));
  auto program = shard_map(mesh, {P{}}, {P{}}, call);
  auto run = testing::RunAndCheckTrace(program, {Array({1}, DType::kF32)});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  ASSERT_EQ(seen.size(), 8u);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      const std::vector<int> y = {4,           j,          4 * i + (j + 3) % 4, 4 * i + (j + 1) % 4,
                                  (j + 3) % 4, (j + 2) % 4};
      const std::vector<int> x = {2, i, 4 * (1 - i) + j, 4 * (1 - i) + j, (i + 1) % 2, i};
      std::vector<int> expected = y;
      expected.insert(expected.end(), x.begin(), x.end());
      EXPECT_EQ(seen[4 * i + j], expected) << "device " << 4 * i + j;
    }
  }
}

// In a program, devices reach an op at different times. A lax collective's start barrier
// signals its neighbours' barrier semaphore, which is the chip's and outlives every call:
// the signal must reach a neighbour that is still busy in the previous op.
TEST(StartBarrier, ReachesANeighbourStillInThePreviousOp) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::VMEM({8, 128}, DType::kF32, "busy")};
  // Compute only: on a slowed chip it ends much later than on the other.
  const PallasCall busy = pallas_call(
      "busy", [](Kernel& k, const Refs&) { k.fill(k.ref("busy"), 1); }, grid, {{{8}, DType::kF32}});
  const Mesh mesh(testing::MakeTopology({2}, {false}));
  auto program =
      shard_map(mesh, {P{"x"}}, {P{}}, [busy](ProgramContext& ctx, const std::vector<Value>& in) {
        ctx.pallas_call(busy, {in[0]});
        return std::vector<Value>{ctx.psum(in[0], "x")};
      });
  const Array x = Array::Random({16}, DType::kF32, 5);
  for (const std::vector<double>& slowdown : {std::vector<double>{1e4, 1}, {1, 1e4}}) {
    RunOptions options;
    options.chip_slowdown = slowdown;
    auto run = testing::RunAndCheckTrace(program, {x}, options);
    ASSERT_TRUE(run.result.ok) << run.result.error;
    Array sum({8}, DType::kF32);
    for (int64_t i = 0; i < 8; ++i)
      sum.SetFlat(i, x.GetFlat(i) + x.GetFlat(8 + i));
    EXPECT_TRUE(CompareClose(run.result.outputs[0], sum, 1e-6, 1e-6).equal);
  }
}

// A ring kernel slices its step semaphores once (kernels/ring.h): each step must still get
// the entry slicing at that step would give.
TEST(RingStepSemaphores, PickTheEntrySlicingEachStepWouldGive) {
  const Ref sems =
      Ref::Make(3, "recv_sems", {kernels::kStepSemaphores}, DType::kInt32, MemorySpace::kSemaphore);
  const kernels::RingStepSemaphores picked(sems);
  for (int step = 0; step < 2 * kernels::kStepSemaphores + 1; ++step) {
    const Ref sliced = kernels::RingStepSemaphore(sems, step);
    EXPECT_EQ(picked[step].Describe(), sliced.Describe()) << "step " << step;
    EXPECT_EQ(picked[step].binding().slot, 3);
    EXPECT_EQ(picked[step].binding().offset, step % kernels::kStepSemaphores);
    EXPECT_TRUE(picked[step].shape().empty());
  }
  EXPECT_EQ(picked[3].Describe(), "recv_sems[1]");
}

}  // namespace
}  // namespace tpusim
