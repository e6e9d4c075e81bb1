// Chips with two TensorCores (v4 and v5p megacore, docs/dsl.md "Megacore"): a pallas_call
// splits its leading parallel grid axis over the cores as Mosaic does, each core with its
// own scratch, MXUs and trace track; kernels see core_index() and num_cores(), signal the
// other core's semaphores, and races and deadlocks name the core.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "base/engine.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// One v5p chip (two TensorCores), or a slice of them along 'x'.
Mesh V5pMesh(int chips = 1) {
  return Mesh(testing::MakeTopology({chips}, {false}, [](config::Topology& t) {
    *t.mutable_chip() = topologies::LoadTopology("v5p-2x2x1").chip();
  }));
}

// out[m, n] = a[m, k] @ b[k, n], one block of bm rows per grid step; b stays in VMEM.
PallasCall RowMatmul(int64_t m, int64_t k, int64_t n, int64_t bm, const std::string& semantics) {
  GridSpec grid;
  grid.grid = {static_cast<int>(m / bm)};
  grid.in_specs = {BlockSpec({bm, k},
                             [](int i) {
                               return BlockIndex{i, 0};
                             }),
                   BlockSpec({k, n}, [](int) {
                     return BlockIndex{0, 0};
                   })};
  grid.out_specs = {BlockSpec({bm, n}, [](int i) { return BlockIndex{i, 0}; })};
  CompilerParams params;
  params.dimension_semantics = {semantics};
  return pallas_call(
      "row_matmul", [](Kernel& kernel, const Refs& r) { kernel.dot(r[0], r[1], r[2], false); },
      grid, {{{m, n}, DType::kF32}}, params);
}

RunResult RunMatmul(const PallasCall& call, const Array& a, const Array& b, bool functional,
                    const std::string& trace_name = "run") {
  RunOptions options;
  options.functional = functional;
  const auto run = testing::RunAndCheckTrace(shard_map(V5pMesh(), {P{}, P{}}, {P{}}, call), {a, b},
                                             options, trace_name);
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return run.result;
}

TEST(CoreShare, SplitsTheLeadingParallelAxisIntoContiguousRangesFirstCoresTakingTheRest) {
  const std::vector<int> grid = {2, 7, 3};
  const std::vector<std::string> semantics = {"arbitrary", "parallel", "parallel"};
  const GridShare first = CoreShare(grid, semantics, 0, 2);
  const GridShare second = CoreShare(grid, semantics, 1, 2);
  EXPECT_EQ(first.axis, 1);
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 4);  // 7 steps: the first core takes the odd one
  EXPECT_EQ(second.axis, 1);
  EXPECT_EQ(second.begin, 4);
  EXPECT_EQ(second.end, 7);
  EXPECT_EQ(CoreShare(grid, {"arbitrary", "core_parallel", "arbitrary"}, 1, 2).begin, 4);
  EXPECT_EQ(CoreShare(grid, {"arbitrary", "arbitrary", "arbitrary"}, 0, 2).axis, -1);
  const GridShare none = CoreShare({1}, {"parallel"}, 1, 2);  // one step: core 1 idles
  EXPECT_EQ(none.begin, none.end);
}

// Compute-bound blocks (bm 256, k 2048, n 1024: each step's dot takes ~10x its DMAs):
// split over two cores the grid takes half as long, plus the launch and the first block
// that the split does not shorten. Tolerance: 0.45 to 0.60 of the arbitrary time.
TEST(Megacore, AParallelAxisTakesAboutHalfTheTimeOfAnArbitraryOneOnV5p) {
  const int64_t m = 4096, k = 2048, n = 1024, bm = 256;
  const Array a = Array::Placeholder({m, k}, DType::kBF16);
  const Array b = Array::Placeholder({k, n}, DType::kBF16);
  const RunResult parallel = RunMatmul(RowMatmul(m, k, n, bm, "parallel"), a, b, false);
  const RunResult arbitrary = RunMatmul(RowMatmul(m, k, n, bm, "arbitrary"), a, b, false);
  ASSERT_TRUE(parallel.ok && arbitrary.ok);
  const double ratio = static_cast<double>(parallel.time()) / static_cast<double>(arbitrary.time());
  EXPECT_GT(ratio, 0.45) << parallel.time() << " vs " << arbitrary.time();
  EXPECT_LT(ratio, 0.60) << parallel.time() << " vs " << arbitrary.time();
}

// Both shares write their rows of one HBM output; an odd grid gives core 0 the extra step.
TEST(Megacore, EachCoreComputesItsRowsAndTheResultMatchesTheReference) {
  for (const int64_t m : {512, 384}) {
    const Array a = Array::Random({m, 256}, DType::kBF16, 1);
    const Array b = Array::Random({256, 128}, DType::kBF16, 2);
    const RunResult run = RunMatmul(RowMatmul(m, 256, 128, 128, "parallel"), a, b, true);
    ASSERT_TRUE(run.ok) << run.error;
    const Comparison check =
        CompareClose(run.outputs[0], testing::HostDot(a, b, DType::kF32), 1e-5, 1e-5);
    EXPECT_TRUE(check.equal) << "m " << m << ": " << check.detail;
  }
}

// Each core's steps show on its own track of the chip ("core 0", "core 1").
TEST(Megacore, EachCoreHasItsOwnTrackOnTheTrace) {
  const Array a = Array::Random({256, 256}, DType::kBF16, 1);
  const Array b = Array::Random({256, 128}, DType::kBF16, 2);
  RunOptions options;
  const auto run = testing::RunAndCheckTrace(
      shard_map(V5pMesh(), {P{}, P{}}, {P{}}, RowMatmul(256, 256, 128, 128, "parallel")), {a, b},
      options, "tracks");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  std::ifstream in(run.trace_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* track : {"core 0", "core 1", "MXU 1", "VMEM 1 port"})
    EXPECT_THAT(bytes, HasSubstr(track));
}

// What a kernel sees of the cores, and a signal into the other core's semaphore: core 1
// signals core 0's "ready", which core 0 waits for; every semaphore ends at 0.
PallasCall Handshake(int target_core) {
  GridSpec grid;
  grid.grid = {2};
  grid.scratch_shapes = {ScratchSpec::SMEM({2}, DType::kInt32, "seen"),
                         ScratchSpec::REGULAR({}, "ready")};
  CompilerParams params;
  params.dimension_semantics = {"parallel"};
  return pallas_call(
      "handshake",
      [target_core](Kernel& k, const Refs& r) {
        Array seen({2}, DType::kInt32);
        seen.SetFlat(0, k.core_index());
        seen.SetFlat(1, k.num_cores());
        k.store(r[1], seen);
        if (k.core_index() == 1) k.signal(r[2], 1, std::nullopt, target_core);
        if (k.core_index() == 0) k.wait(r[2], 1);
      },
      grid, {{{8, 128}, DType::kF32}}, params);
}

TEST(Megacore, KernelsSeeTheirCoreAndSignalTheOtherCoresSemaphore) {
  const auto run =
      testing::RunAndCheckTrace(shard_map(V5pMesh(), {}, {P{}}, Handshake(0)), {}, {}, "handshake");
  EXPECT_TRUE(run.result.ok) << run.result.error;
}

TEST(Megacore, ACoreIndexOutsideTheDevicesCoresIsAnError) {
  const auto run =
      testing::RunAndCheckTrace(shard_map(V5pMesh(), {}, {P{}}, Handshake(2)), {}, {}, "bad_core");
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error,
              HasSubstr("names core_index 2, but the device has 2 TensorCores; pass a "
                        "core_index in [0, num_cores())."));
}

// Core 1 signals its own semaphore instead of core 0's: core 0 waits forever, and the
// deadlock report names the chip's core ("chip 0 (x=0) core 0").
TEST(Megacore, ADeadlockReportNamesTheCore) {
  const auto run =
      testing::RunAndCheckTrace(shard_map(V5pMesh(), {}, {P{}}, Handshake(1)), {}, {}, "deadlock");
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error, HasSubstr("deadlock"));
  EXPECT_THAT(run.result.error,
              HasSubstr("chip 0 (x=0) core 0 waits in semaphore_wait on REGULAR semaphore "
                        "'ready'"));
}

// The start barrier on megacore chips: each core has its own barrier semaphore (docs/dsl.md,
// "Megacore"), as Pallas's core_barrier assumes when it signals the semaphore on every other
// core and waits for their count. On a ring of 4 v5p chips both cores meet the same core of
// both neighbours; with `wrong_core`, core 0 signals its neighbours' core 1 instead.
PallasCall MeetNeighboursOnBothCores(bool wrong_core) {
  GridSpec grid;
  grid.grid = {2};
  CompilerParams params;
  params.dimension_semantics = {"parallel"};
  params.collective_id = 0;
  return pallas_call(
      "meet",
      [wrong_core](Kernel& k, const Refs&) {
        const int n = 4, me = k.device_id();
        const int target = wrong_core && k.core_index() == 0 ? 1 : k.core_index();
        for (int d : {(me + 1) % n, (me + n - 1) % n})
          k.signal(k.barrier_semaphore(), 1, DeviceId::Logical(d), target);
        k.wait(k.barrier_semaphore(), 2);
      },
      grid, {{{8, 128}, DType::kF32}}, params);
}

TEST(Megacore, EachCoreMeetsTheNeighboursOnItsOwnBarrierSemaphore) {
  const auto run = testing::RunAndCheckTrace(
      shard_map(V5pMesh(4), {}, {P{}}, MeetNeighboursOnBothCores(false)), {}, {}, "meet");
  EXPECT_TRUE(run.result.ok) << run.result.error;
}

// With one barrier semaphore per chip the four signals would meet both waits and hide the
// mistake; with one per core, core 0 waits for signals that went to core 1, and the deadlock
// report names the core and its barrier semaphore.
TEST(Megacore, ABarrierSignalledOnTheWrongCoreIsReportedNamingTheCore) {
  const auto run = testing::RunAndCheckTrace(
      shard_map(V5pMesh(4), {}, {P{}}, MeetNeighboursOnBothCores(true)), {}, {}, "meet_wrong");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kDeadlock);
  EXPECT_THAT(run.result.error,
              HasSubstr("chip 0 (x=0) core 0 waits in semaphore_wait on BARRIER semaphore "
                        "'barrier_semaphore (collective_id 0, core 0)': value 0, needs 2"));
}

// Both cores write the whole output block 0: the second write races the first core's
// copy-out, and the report names both cores.
TEST(Megacore, ARaceBetweenTheCoresNamesThem) {
  GridSpec grid;
  grid.grid = {2};
  grid.out_specs = {BlockSpec({8, 128}, [](int) { return BlockIndex{0, 0}; })};
  CompilerParams params;
  params.dimension_semantics = {"parallel"};
  const PallasCall call = pallas_call(
      "same_block", [](Kernel& k, const Refs& r) { k.fill(r[0], k.core_index()); }, grid,
      {{{8, 128}, DType::kF32}}, params);
  const auto run = testing::RunAndCheckTrace(shard_map(V5pMesh(), {}, {P{}}, call), {}, {}, "race");
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error, HasSubstr("race on chip 0 (x=0), HBM buffer 'out0 f32[8,128]'"));
  EXPECT_THAT(run.result.error, HasSubstr("by chip 0 (x=0) core 0"));
  EXPECT_THAT(run.result.error, HasSubstr("by chip 0 (x=0) core 1"));
  EXPECT_THAT(run.result.error, HasSubstr("come from the chip's two TensorCores"));
}

// The model's side: a thread starts work on a core the chip does not have, or frees a
// buffer of the other core's VMEM.
TEST(Megacore, SpawningOnACoreTheChipDoesNotHaveIsAnError) {
  auto engine = base::BuildEngine(V5pMesh().topology(), {});
  const auto outcome = engine->Run([](base::CorePort& port) {
    port.Join(port.SpawnOnCore(2, "share", [](base::CorePort&) {}));
  });
  ASSERT_FALSE(outcome.ok);
  EXPECT_THAT(outcome.error, HasSubstr("starts 'share' on core 2, but the chip has 2 "
                                       "TensorCores; pick a core in [0, 2) (num_cores())."));
}

TEST(Megacore, ACoreFreesOnlyItsOwnVmemBuffers) {
  auto engine = base::BuildEngine(V5pMesh().topology(), {});
  const auto outcome = engine->Run([](base::CorePort& port) {
    const base::BufferHandle mine = port.Allocate(base::MemorySpace::kVmem, 4096, "mine", {});
    port.Join(port.SpawnOnCore(1, "other", [mine](base::CorePort& other) {
      EXPECT_EQ(other.core_index(), 1);
      EXPECT_EQ(other.num_cores(), 2);
      other.Free(mine);
    }));
  });
  ASSERT_FALSE(outcome.ok);
  EXPECT_THAT(outcome.error, HasSubstr("core 1 frees a VMEM buffer of core 0; a core frees only "
                                       "its own VMEM and SMEM buffers."));
}

}  // namespace
}  // namespace tpusim
