// Layer 2 and 3 for the reduction, all-to-all and multi-axis kernels: each gives the host
// reference on every chip of 1-, 2- and 3-D slices, odd and even rings, with and without
// wraparound; the psum's capacity semaphores keep it right when one chip is slow (and the
// variant without them goes wrong); and, in timing-only runs at large V, the reductions
// take the time docs/references.md §3 gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "base/param_text.h"
#include "kernels/all_gather.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

config::Topology TopologyFor(const std::string& name) {
  if (name == "ring5wrap") return testing::MakeTopology({5}, {true});
  if (name == "line5") return testing::MakeTopology({5}, {false});
  if (name == "ring8wrap") return testing::MakeTopology({1, 8}, {false, true});
  if (name == "line8") return testing::MakeTopology({1, 8}, {false, false});
  if (name == "mesh3x5wrap") return testing::MakeTopology({3, 5}, {true, true});
  if (name == "mesh3x5") return testing::MakeTopology({3, 5}, {false, false});
  // 3-D, odd and even axes, one wrapped.
  if (name == "cube2x3x5") return testing::MakeTopology({2, 3, 5}, {false, true, false});
  return topologies::LoadTopology(name);
}

enum class Family { kReduction, kAllToAll, kTwoAxes, kAxes };

Family FamilyOf(const std::string& kernel) {
  if (kernel == "all_to_all") return Family::kAllToAll;
  if (kernel == "all_gather_2d") return Family::kTwoAxes;
  if (kernel == "all_gather_nd") return Family::kAxes;
  return Family::kReduction;
}

struct Case {
  std::string kernel;
  std::string topology;
  std::string axis;   // all_gather_nd: its axes, "x,y,z", or empty for every mesh axis
  std::string axis2;  // all_gather_2d
  dsl::DType dtype = dsl::DType::kBF16;
  // Reductions: elements per VMEM chunk (0: the kernel's default, one chunk at this size).
  int64_t chunk_elements = 0;
  int64_t chunks_in_flight = 0;  // ring reductions: 0 is the kernel's default (2)
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kernel << " on " << c.topology << " axis " << c.axis
      << (c.axis2.empty() ? "" : "," + c.axis2) << " " << dsl::DTypeName(c.dtype)
      << (c.chunk_elements ? " chunks of " + std::to_string(c.chunk_elements) : "")
      << (c.chunks_in_flight ? ", " + std::to_string(c.chunks_in_flight) + " in flight" : "");
}

// Small, odd-sized blocks: 1027 elements per reduction block (halves 513 / 514), 37 per
// all-to-all block, 103 per 2-D block (quarters 25 / 26 / 26 / 26) and per N-D block (on 3
// axes, shares of 17 and 18).
kernels::Params ArgsFor(const Case& c, const dsl::Mesh& mesh) {
  kernels::ParamValues args = {{"dtype", c.dtype}};
  const uint64_t esize = dsl::SizeOf(c.dtype);
  uint64_t bytes = 0;
  if (FamilyOf(c.kernel) == Family::kAxes) {
    uint64_t devices = 1;
    std::vector<std::string> axes = mesh.axis_names();
    if (!c.axis.empty()) {
      args.emplace("axes", c.axis);
      axes = *base::ParseStrings(c.axis);
    }
    for (const std::string& axis : axes)
      devices *= static_cast<uint64_t>(mesh.AxisSize(axis));
    args.emplace("bytes", devices * 103 * esize);
    return testing::ParamsFor(c.kernel, args);
  }
  args.emplace("axis", c.axis);
  const uint64_t x = static_cast<uint64_t>(mesh.AxisSize(c.axis));
  switch (FamilyOf(c.kernel)) {
    case Family::kReduction:
      bytes = x * 1027 * esize;
      break;
    case Family::kAllToAll:
      bytes = x * x * 37 * esize;
      break;
    case Family::kTwoAxes:
      bytes = x * static_cast<uint64_t>(mesh.AxisSize(c.axis2)) * 103 * esize;
      args.emplace("axis2", c.axis2);
      break;
    case Family::kAxes:
      break;
  }
  args.emplace("bytes", bytes);
  if (c.chunk_elements)
    args.emplace("chunk_bytes", static_cast<uint64_t>(c.chunk_elements) * esize);
  if (c.chunks_in_flight) args.emplace("chunks_in_flight", c.chunks_in_flight);
  return testing::ParamsFor(c.kernel, args);
}

class CollectiveLibrary : public ::testing::TestWithParam<Case> {};

TEST_P(CollectiveLibrary, MatchesTheHostReferenceOnEveryChip) {
  const Case& c = GetParam();
  const auto* info = kernels::Registry::Get().Find(c.kernel);
  ASSERT_NE(info, nullptr) << c.kernel;
  const dsl::Mesh mesh(TopologyFor(c.topology));
  kernels::Workload w = info->make(mesh, ArgsFor(c, mesh));
  auto run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto check = dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;
  EXPECT_GT(run.result.time(), 0u);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  // 1-D odd rings with and without wraparound, an even ring with and without, both axes of
  // a 2-D slice, and a 3-D slice (an axis of the v4 cube, and each axis of an odd one).
  const std::vector<std::pair<std::string, std::string>> axes = {
      {"ring5wrap", "x"}, {"line5", "x"},     {"ring8wrap", "y"}, {"line8", "y"},
      {"v5e-2x2", "x"},   {"v5e-4x4", "x"},   {"v5e-4x4", "y"},   {"v4-4x4x4", "z"},
      {"cube2x3x5", "x"}, {"cube2x3x5", "y"}, {"cube2x3x5", "z"},
  };
  for (const char* kernel : {"reduce_scatter_ring", "reduce_scatter_bidi", "all_reduce_ring",
                             "all_reduce_psum", "all_to_all"}) {
    for (const auto& [topology, axis] : axes)
      cases.push_back({kernel, topology, axis, "", dsl::DType::kBF16, 0});
    cases.push_back({kernel, "ring5wrap", "x", "", dsl::DType::kF32, 0});
    cases.push_back({kernel, "v5e-4x4", "y", "", dsl::DType::kF32, 0});
  }
  // Many chunks in several rounds, the last round short: 1027 = 6 chunks of ~171 (3
  // rounds of 2); bidi halves of 513 / 514 = 3 chunks each (rounds of 2 and 1).
  for (const char* kernel : {"reduce_scatter_ring", "reduce_scatter_bidi", "all_reduce_ring"}) {
    for (const auto& [topology, axis] : std::vector<std::pair<std::string, std::string>>{
             {"ring5wrap", "x"}, {"line8", "y"}, {"v5e-2x2", "y"}, {"cube2x3x5", "z"}}) {
      cases.push_back({kernel, topology, axis, "", dsl::DType::kBF16, 200});
      cases.push_back({kernel, topology, axis, "", dsl::DType::kF32, 200});
    }
  }
  // One chunk in flight per step, and three (rounds of 3, the last shorter): the credits
  // and slots follow the chunks_in_flight parameter.
  for (const char* kernel : {"reduce_scatter_ring", "reduce_scatter_bidi", "all_reduce_ring"}) {
    for (const int64_t in_flight : {1, 3}) {
      cases.push_back({kernel, "ring5wrap", "x", "", dsl::DType::kBF16, 200, in_flight});
      cases.push_back({kernel, "line8", "y", "", dsl::DType::kF32, 200, in_flight});
    }
  }
  // The psum in VMEM-sized pieces: 5 x 1027 elements in rounds of 2000 (the last shorter).
  cases.push_back({"all_reduce_psum", "ring5wrap", "x", "", dsl::DType::kBF16, 2000});
  cases.push_back({"all_reduce_psum", "v5e-4x4", "x", "", dsl::DType::kF32, 1000});
  // Two axes at once, in either order, on 2-D and 3-D meshes.
  for (const auto& [topology, a, b] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"v5e-4x4", "x", "y"},
           {"v5e-4x4", "y", "x"},
           {"v5e-2x4", "x", "y"},
           {"mesh3x5wrap", "x", "y"},
           {"mesh3x5", "y", "x"},
           {"ring8wrap", "x", "y"},  // a size-1 axis: one phase is empty
           {"v4-4x4x4", "x", "z"},
           {"cube2x3x5", "y", "z"},
           {"cube2x3x5", "z", "x"}}) {
    cases.push_back({"all_gather_2d", topology, a, b, dsl::DType::kBF16, 0});
  }
  cases.push_back({"all_gather_2d", "mesh3x5wrap", "x", "y", dsl::DType::kF32, 0});
  // Any number of axes: three (the v4 cube; an odd cube with one wrapped axis), two in
  // another order, every mesh axis by default, and with a size-1 axis.
  for (const auto& [topology, axes] :
       std::vector<std::pair<std::string, std::string>>{{"v4-4x4x4", "x,y,z"},
                                                        {"cube2x3x5", "z,x,y"},
                                                        {"cube2x3x5", "z,x"},
                                                        {"mesh3x5wrap", ""},
                                                        {"ring8wrap", "x,y"}}) {
    cases.push_back({"all_gather_nd", topology, axes, "", dsl::DType::kBF16, 0});
  }
  cases.push_back({"all_gather_nd", "cube2x3x5", "", "", dsl::DType::kF32, 0});
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string name = c.kernel + "_" + c.topology + "_" + c.axis + c.axis2 + "_" +
                     dsl::DTypeName(c.dtype) +
                     (c.chunk_elements ? "_chunks" + std::to_string(c.chunk_elements) : "") +
                     (c.chunks_in_flight ? "_inflight" + std::to_string(c.chunks_in_flight) : "");
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, CollectiveLibrary, ::testing::ValuesIn(AllCases()), CaseName);

// ---------------------------------------------------------------------------------------
// A slow chip: RunOptions::chip_slowdown multiplies its compute (the VPU adds) time.

struct SlowRun {
  dsl::RunResult result;
  dsl::Comparison check;
};

SlowRun RunWithSlowChip(const std::string& kernel, double slowdown, bool race_check = true) {
  // A 5-chip ring; chip 2 adds `slowdown` times slower than the others. At 4 KiB per
  // chip a step takes ~1.1 us of link time and an add ~3 ns, so 10^4 makes the slow
  // chip's add last ~30 us: many steps of its left neighbour.
  const dsl::Mesh mesh(testing::MakeTopology({5}, {true}));
  kernels::Workload w = testing::Entry(kernel).make(
      mesh, testing::ParamsFor(kernel, {{"bytes", 5 * 1024 * 4}, {"dtype", dsl::DType::kF32}}));
  dsl::RunOptions options;
  options.chip_slowdown = {1, 1, slowdown, 1, 1};
  options.race_check = race_check;
  SlowRun run;
  run.result = testing::RunAndCheckTrace(w.program, w.inputs, options, kernel).result;
  if (run.result.ok)
    run.check = dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  return run;
}

TEST(PsumCapacity, StaysCorrectWhenOneChipIsSlow) {
  const SlowRun nominal = RunWithSlowChip("all_reduce_psum", 1);
  const SlowRun slow = RunWithSlowChip("all_reduce_psum", 1e4);
  ASSERT_TRUE(nominal.result.ok) << nominal.result.error;
  ASSERT_TRUE(slow.result.ok) << slow.result.error;
  EXPECT_TRUE(nominal.check.equal) << nominal.check.detail;
  EXPECT_TRUE(slow.check.equal) << slow.check.detail;
  // The slowdown really took effect: everyone waits for the slow chip's adds.
  EXPECT_GT(slow.result.time(), 10 * nominal.result.time());
}

TEST(PsumCapacity, WithoutCapacitySemaphoresASlowChipGetsWrongData) {
  // At one speed the broken variant happens to be right: the hazard needs a slow chip.
  const SlowRun nominal = RunWithSlowChip("all_reduce_psum_no_capacity", 1, false);
  ASSERT_TRUE(nominal.result.ok) << nominal.result.error;
  EXPECT_TRUE(nominal.check.equal) << nominal.check.detail;
  // Chip 1 no longer waits for chip 2, runs ahead and refills the slot chip 2 is still
  // adding from and passing on. No semaphore goes wrong (the byte counts balance), so
  // without the happens-before check either the data shows it (the chips' sums, which
  // out_spec P() says are one value, differ, and the run's replication check fails it) or,
  // when chip 1's refill overtakes its own copy still landing in that slot, the DMA-DMA
  // check that every run keeps.
  const SlowRun slow = RunWithSlowChip("all_reduce_psum_no_capacity", 1e4, false);
  ASSERT_FALSE(slow.result.ok) << "the race went unnoticed";
  EXPECT_THAT(
      slow.result.error,
      ::testing::AnyOf(::testing::HasSubstr("has out_spec P(), which says it is the same on every "
                                            "device along 'x', but devices "),
                       ::testing::HasSubstr("is still writing. Wait for the first copy to land")));
  std::printf("as expected, %s\n", slow.result.error.c_str());
}

TEST(PsumCapacity, WithoutCapacitySemaphoresTheRaceIsReportedAtAnySpeed) {
  // Happens-before, not timing: right data by luck is still a race.
  for (double slowdown : {1.0, 1e4}) {
    const SlowRun run = RunWithSlowChip("all_reduce_psum_no_capacity", slowdown);
    ASSERT_FALSE(run.result.ok);
    EXPECT_EQ(run.result.error_kind, ErrorKind::kRace) << run.result.error;
    EXPECT_THAT(run.result.error, ::testing::HasSubstr("(remote) writing into it"));
    EXPECT_THAT(run.result.error, ::testing::HasSubstr("capacity semaphore"));
    std::printf("as expected, %s\n", run.result.error.c_str());
  }
}

TEST(ReductionCredits, RingReductionsStayCorrectWhenOneChipIsSlow) {
  for (const char* kernel : {"reduce_scatter_ring", "reduce_scatter_bidi", "all_reduce_ring"}) {
    SCOPED_TRACE(kernel);
    const SlowRun slow = RunWithSlowChip(kernel, 1e4);
    ASSERT_TRUE(slow.result.ok) << slow.result.error;
    EXPECT_TRUE(slow.check.equal) << slow.check.detail;
  }
}

TEST(ReductionChunks, InputsLargerThanVmemRunInVmemSizedChunks) {
  // 64 KiB of VMEM per chip and 256 KiB of input per chip: the kernels size their chunks
  // (and the psum its rounds) from the chip's VMEM, so nothing is over capacity.
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}, [](config::Topology& t) {
    t.mutable_chip()->mutable_vmem()->set_capacity_bytes(64 << 10);
  }));
  for (const char* kernel :
       {"reduce_scatter_ring", "reduce_scatter_bidi", "all_reduce_ring", "all_reduce_psum"}) {
    SCOPED_TRACE(kernel);
    kernels::Workload w = testing::Entry(kernel).make(
        mesh, testing::ParamsFor(kernel, {{"bytes", 256 << 10}, {"dtype", dsl::DType::kF32}}));
    const auto result = w.program.Run(w.inputs, {});
    ASSERT_TRUE(result.ok) << result.error;
    const auto check = dsl::CheckAgainstReference(w.program, result, w.expected, w.rtol, w.atol);
    EXPECT_TRUE(check.equal) << check.detail;
  }
}

// ---------------------------------------------------------------------------------------
// Layer 3: the reductions against docs/references.md §3 at large V, timing-only.
//
// The x axis of v5e-16x16 (16 chips, wraparound), V = 256 MiB. The slice's 16 x-rings share
// no links, so one ring of 16 v5e chips gives the same time at 1/16 of the cost. Tolerance
// 5%: what the bound leaves out is one hop latency per ring step (15 us of ~5.6 ms),
// filling the chunk pipeline (one 4 MiB chunk's transfer and add) and DMA start-up. The
// VPU adds (~0.7% of the link time at 1024 f32 / 2048 bf16 elements per cycle) run while
// the next chunk is on the wire, so the expected time is the bound itself.

config::Topology V5eRing16() {
  return testing::MakeTopology({16}, {true});
}

double SimOverBound(const std::string& kernel, uint64_t bytes, const config::Topology& topology) {
  const dsl::Mesh mesh(topology);
  const kernels::Params args =
      testing::ParamsFor(kernel, {{"axis", "x"}, {"bytes", bytes}}, /*functional=*/false);
  const auto* info = kernels::Registry::Get().Find(kernel);
  kernels::Workload w = info->make(mesh, args);
  dsl::RunOptions options;
  options.functional = false;
  const dsl::RunResult result = w.program.Run(w.inputs, options);
  EXPECT_TRUE(result.ok) << result.error;
  const double bound = info->bound(mesh, args).seconds;
  const double ratio = static_cast<double>(result.time()) * 1e-12 / bound;
  ::testing::Test::RecordProperty("sim_over_bound", std::to_string(ratio));
  std::printf("%s: sim / bound = %.4f\n", kernel.c_str(), ratio);
  return ratio;
}

TEST(ReductionTiming, RingReduceScatterIsAllGatherTime) {
  const double ratio = SimOverBound("reduce_scatter_ring", 256ull << 20, V5eRing16());
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.05);
}

TEST(ReductionTiming, BidiReduceScatterIsBidiAllGatherTime) {
  const double ratio = SimOverBound("reduce_scatter_bidi", 256ull << 20, V5eRing16());
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.05);
}

TEST(ReductionTiming, RingAllReduceIsTwiceReduceScatter) {
  const double ratio = SimOverBound("all_reduce_ring", 256ull << 20, V5eRing16());
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.05);
}

// Looser (10%): an all-to-all's routes are up to X/2 hops long and end unevenly, and the
// 2-D gather pays each phase's ring latency on two axes; both approach the bound as V grows.
TEST(CollectiveTiming, AllToAllApproachesAQuarterOfTheRing) {
  const double ratio = SimOverBound("all_to_all", 1ull << 30, V5eRing16());
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.10);
}

TEST(CollectiveTiming, TwoAxisAllGatherUsesBothAxes) {
  const double ratio =
      SimOverBound("all_gather_2d", 256ull << 20, topologies::LoadTopology("v5e-16x16"));
  EXPECT_GE(ratio, 1.0);
  EXPECT_LE(ratio, 1.10);
}

// ---------------------------------------------------------------------------------------

TEST(CollectiveArguments, ReductionsRefuseInt8AndTwoAxisGatherNeedsTwoAxes) {
  const dsl::Mesh square(topologies::LoadTopology("v5e-2x2"));
  try {
    // Refused by the declaration (int8 is not among its dtypes), which says why.
    testing::ParamsFor("reduce_scatter_ring", {{"bytes", 4096}, {"dtype", dsl::DType::kInt8}});
    FAIL() << "int8 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("overflow"), std::string::npos) << e.what();
  }
  const dsl::Mesh ring(testing::MakeTopology({4}, {true}));
  try {
    testing::Entry("all_gather_2d")
        .make(ring, testing::ParamsFor("all_gather_2d", {{"bytes", 4096}}));
    FAIL() << "a 1-D mesh accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("only one"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------
// Host memory: a device's semaphores must not grow with the ring, or an N-chip ring holds
// N^2 of them (a 1024-chip all-gather needed 0.6 GB for them alone).

int64_t SemaphoresPerDevice(const dsl::PallasCall& call) {
  int64_t count = 0;
  for (const dsl::ScratchSpec& spec : call.grid_spec.scratch_shapes) {
    if (spec.memory_space != dsl::MemorySpace::kSemaphore) continue;
    int64_t elements = 1;
    for (int64_t d : spec.shape)
      elements *= d;
    count += elements;
  }
  return count;
}

TEST(RingSemaphores, DoNotGrowWithTheAxis) {
  const dsl::ShapeDtype block{{1024}, dsl::DType::kF32};
  EXPECT_EQ(SemaphoresPerDevice(kernels::RingAllGatherCall("x", 64, block)),
            SemaphoresPerDevice(kernels::RingAllGatherCall("x", 4, block)));
  EXPECT_EQ(SemaphoresPerDevice(kernels::BidiAllGatherCall("x", 64, block)),
            SemaphoresPerDevice(kernels::BidiAllGatherCall("x", 4, block)));
  const dsl::Mesh small(testing::MakeTopology({4}, {true}));
  const dsl::Mesh large(testing::MakeTopology({64}, {true}));
  EXPECT_EQ(
      SemaphoresPerDevice(kernels::RingAllReduceCall(large, "x", {{64 * 1024}, dsl::DType::kF32})),
      SemaphoresPerDevice(kernels::RingAllReduceCall(small, "x", {{4 * 1024}, dsl::DType::kF32})));
  // Still more than one per direction: consecutive steps use different semaphores.
  EXPECT_GE(SemaphoresPerDevice(kernels::RingAllGatherCall("x", 64, block)), 1 + 2 * 2);
}

TEST(AllGatherNd, SemaphoresDoNotGrowWithTheAxes) {
  const auto count = [](const std::vector<int>& shape) {
    const dsl::Mesh mesh(testing::MakeTopology(shape, std::vector<bool>(shape.size(), true)));
    int64_t devices = 1;
    for (int d : shape)
      devices *= d;
    const kernels::Workload w =
        testing::Entry("all_gather_nd")
            .make(mesh, testing::ParamsFor("all_gather_nd", {{"bytes", devices * 96 * 4}},
                                           /*functional=*/false));
    return SemaphoresPerDevice(w.program.call());
  };
  EXPECT_EQ(count({4, 4, 4}), count({16, 20, 28}));
  EXPECT_LT(count({4, 4}), count({4, 4, 4}));  // per axis, not per step
}

// The bound is a cut: on TPU7x the chip (both chiplets) must take in every block it lacks
// over its ICI links, however fast its die-to-die link; on a torus of equal links the
// device's own links bind, as docs/references.md §3 states.
TEST(AllGatherNd, BoundIsTheTightestCut) {
  const uint64_t bytes = 64ull << 20;
  const auto bound_of = [bytes](const dsl::Mesh& mesh) {
    const kernels::Params args =
        testing::ParamsFor("all_gather_nd", {{"bytes", bytes}}, /*functional=*/false);
    return testing::Entry("all_gather_nd").bound(mesh, args).seconds;
  };
  const double v = static_cast<double>(bytes);

  const dsl::Mesh tpu7x(topologies::LoadTopology("tpu7x-2x2x2"));
  const kernels::AxisLinks ici = kernels::LinksOf(tpu7x, "x");
  const kernels::AxisLinks d2d = kernels::LinksOf(tpu7x, "chiplet");
  ASSERT_FALSE(ici.wraparound);
  ASSERT_GT(d2d.link_bytes_per_s, 3 * ici.link_bytes_per_s);  // else the device cut binds
  // 16 devices, chips of 2, each chiplet with one link on each of x, y and z.
  const double chip_cut = v * (16 - 2) / 16 / (2 * 3 * ici.link_bytes_per_s);
  EXPECT_NEAR(bound_of(tpu7x), chip_cut, chip_cut * 1e-12);
  kernels::Workload w = testing::Entry("all_gather_nd")
                            .make(tpu7x, testing::ParamsFor("all_gather_nd", {{"bytes", bytes}},
                                                            /*functional=*/false));
  dsl::RunOptions options;
  options.functional = false;
  const dsl::RunResult result = w.program.Run(w.inputs, options);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_GE(static_cast<double>(result.time()) * 1e-12, chip_cut);  // a bound holds

  const dsl::Mesh cube(topologies::LoadTopology("v5p-4x4x4"));
  const kernels::AxisLinks ring = kernels::LinksOf(cube, "x");
  ASSERT_TRUE(ring.wraparound);
  const double device_cut = v * (64 - 1) / 64 / (3 * 2 * ring.link_bytes_per_s);
  EXPECT_NEAR(bound_of(cube), device_cut, device_cut * 1e-12);
}

TEST(AllGatherNd, RefusesAxesItCannotGatherOver) {
  const dsl::Mesh mesh(topologies::LoadTopology("v4-4x4x4"));
  const auto error_of = [&mesh](const std::string& entry, const kernels::ParamValues& args) {
    try {
      testing::Entry(entry).make(mesh, testing::ParamsFor(entry, args));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of("all_gather_nd", {{"axes", "x,z,x"}, {"bytes", 64 * 4096}}),
              ::testing::HasSubstr("names mesh axis 'x' twice in axes; name each axis once."));
  EXPECT_THAT(error_of("all_gather_nd", {{"axes", "x,w"}, {"bytes", 64 * 4096}}),
              ::testing::HasSubstr("mesh axis 'w' does not exist"));
  EXPECT_THAT(error_of("all_gather_2d", {{"axis", "y"}, {"axis2", "y"}, {"bytes", 64 * 4096}}),
              ::testing::HasSubstr("needs two different mesh axes, got 'y' twice."));
  const dsl::Mesh ring(testing::MakeTopology({8}, {true}));
  try {
    testing::Entry("all_gather_2d")
        .make(ring, testing::ParamsFor("all_gather_2d", {{"bytes", 8 * 64}}));
    ADD_FAILURE() << "a one-axis mesh was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("has only one; use all_gather_bidi."));
  }
}

}  // namespace
}  // namespace tpusim
