// TPU v5e routes a remote DMA only to a power-of-two offset (docs/model.md, "Generations and
// their rules"): tpusim fails such a DMA clearly on a v5e slice, and runs it on a slice that
// allows nonphysical machines or on another generation.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "kernels/lax/collectives.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// Every device sends its block `shift` devices along x (mod the axis), after a start barrier
// with the devices it talks to.
RunResult Shift(const config::Topology& topology, int shift) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "send"), ScratchSpec::DMA({}, "recv")};
  KernelFn body = [shift](Kernel& k, const Refs&) {
    const auto [x, out, send, recv] = k.refs("x", "out", "send", "recv");
    const int n = k.axis_size("x");
    const int me = k.axis_index("x");
    const int to = (me + shift) % n;
    const int from = (me - shift + n) % n;
    const Ref barrier = k.barrier_semaphore();
    k.signal(barrier, 1, DeviceId{{"x", to}});
    k.signal(barrier, 1, DeviceId{{"x", from}});
    k.wait(barrier, 2);
    AsyncCopy copy = k.async_remote_copy(x, out, send, recv, DeviceId{{"x", to}});
    copy.start();
    copy.wait();
  };
  PallasCall call = pallas_call("shift", body, grid, {{{256}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  call.compiler_params.collective_id = 0;
  const Mesh mesh(topology);
  const ShardMap program = shard_map(mesh, {P{"x"}}, {P{"x"}}, call);
  return program.Run({Array::Iota({256 * mesh.AxisSize("x")}, DType::kF32)}, RunOptions{});
}

TEST(V5eDmaOffsets, AnOffsetOfThreeOnAnAxisOf8FailsNamingTheDmaAndTheRule) {
  const RunResult r = Shift(topologies::LoadTopology("v5e-8x8"), 3);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, ErrorKind::kKernelMisuse) << r.error;
  // Every chip's DMA breaks the rule; the run stops at the first one it starts.
  EXPECT_THAT(r.error,
              HasSubstr("DMA 'remote copy x -> device 48 out' goes from chip 24 (x=3, y=0) to "
                        "chip 48 (x=6, y=0), an offset of 3 (or -5) chips along axis 'x', but a "
                        "TPU v5e chip routes a remote DMA only to a power-of-two offset from "
                        "itself (the Pallas distributed guide, docs/references.md §2). Send it "
                        "in hops of power-of-two offsets, or set allow_nonphysical: true in the "
                        "topology to study a hypothetical machine."));
}

TEST(V5eDmaOffsets, PowerOfTwoOffsetsEitherWayRoundRun) {
  // 1, 2, 4 and -1 (the last device to the first, as a ring's right neighbour) all pass.
  for (int shift : {1, 2, 4, 7}) {
    const RunResult r = Shift(topologies::LoadTopology("v5e-8x8"), shift);
    EXPECT_TRUE(r.ok) << "shift " << shift << ": " << r.error;
  }
  // On an axis of 4 every offset is ±1 or 2.
  EXPECT_TRUE(Shift(topologies::LoadTopology("v5e-4x4"), 3).ok);
}

TEST(V5eDmaOffsets, OtherGenerationsAndNonphysicalSlicesRouteAnywhere) {
  EXPECT_TRUE(Shift(topologies::LoadTopology("v6e-8x8"), 3).ok);
  config::Topology hypothetical = topologies::LoadTopology("v5e-8x8");
  hypothetical.set_allow_nonphysical(true);
  const RunResult r = Shift(hypothetical, 3);
  EXPECT_TRUE(r.ok) << r.error;
}

// The rule is the guide's, for a Pallas kernel's remote DMAs. XLA's collectives reach every
// chip of a v5e slice (an all_to_all over an axis of 8 sends to offsets 3 and 5), so the lax
// kernels that model them (kernels/lax/collectives.h) are not held to it.
TEST(V5eDmaOffsets, XlaCollectivesReachEveryChip) {
  const Mesh mesh(topologies::LoadTopology("v5e-8x8"));
  kernels::lax::CollectiveSpec spec{kernels::lax::Collective::kAllToAll, {"x"}};
  spec.tiled = true;
  const PallasCall call = kernels::lax::MakeCall(mesh, spec, ShapeDtype{{8 * 64}, DType::kF32});
  EXPECT_TRUE(call.xla_collective);
  const ShardMap program = shard_map(mesh, {P{"x"}}, {P{"x"}}, call);
  const RunResult r = program.Run({Array::Iota({8 * 8 * 64}, DType::kF32)}, RunOptions{});
  EXPECT_TRUE(r.ok) << r.error;
}

}  // namespace
}  // namespace tpusim
