// Layer 2: every library collective gives the reference answer on every chip, on 2-D
// slices (both axes), a test-local 1x8 ring, with and without wraparound, in bf16 and f32.

#include <gtest/gtest.h>

#include <fstream>

#include "kernels/registry.h"
#include "sim/chunk.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

struct Case {
  std::string kernel;
  std::string topology;  // preset name, or "ring8" / "ring5wrap" for test-local rings
  std::string axis;
  dsl::DType dtype;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.kernel << " on " << c.topology << " axis " << c.axis << " " << dsl::DTypeName(c.dtype);
}

config::Topology TopologyFor(const std::string& name) {
  if (name == "ring8") return testing::MakeTopology({1, 8}, {false, false});
  if (name == "ring8wrap") return testing::MakeTopology({1, 8}, {false, true});
  if (name == "ring5wrap") return testing::MakeTopology({5}, {true});
  return topologies::LoadTopology(name);
}

dsl::RunOptions TimingOnly() {
  dsl::RunOptions options;
  options.functional = false;
  return options;
}

class CollectiveCorrectness : public ::testing::TestWithParam<Case> {};

TEST_P(CollectiveCorrectness, MatchesTheHostReferenceOnEveryChip) {
  const Case& c = GetParam();
  const auto* info = kernels::Registry::Get().Find(c.kernel);
  ASSERT_NE(info, nullptr) << c.kernel;
  const dsl::Mesh mesh(TopologyFor(c.topology));
  // Odd-sized shards exercise uneven halves in the bidirectional kernel.
  const uint64_t bytes = static_cast<uint64_t>(mesh.AxisSize(c.axis)) * dsl::SizeOf(c.dtype) * 1027;
  kernels::Workload w = info->make(
      mesh, testing::ParamsFor(c.kernel, {{"axis", c.axis}, {"dtype", c.dtype}, {"bytes", bytes}}));
  auto run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto check = dsl::CheckAgainstReference(w.program, run.result, w.expected);
  EXPECT_TRUE(check.equal) << check.detail;
  EXPECT_GT(run.result.time(), 0u);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* kernel : {"ppermute", "all_gather_ring", "all_gather_bidi"}) {
    for (auto dtype : {dsl::DType::kBF16, dsl::DType::kF32}) {
      cases.push_back({kernel, "v5e-2x2", "x", dtype});
      cases.push_back({kernel, "v5e-2x2", "y", dtype});
      cases.push_back({kernel, "v5e-4x4", "x", dtype});
      cases.push_back({kernel, "v5e-4x4", "y", dtype});
      cases.push_back({kernel, "ring8", "y", dtype});
      cases.push_back({kernel, "ring8wrap", "y", dtype});
      cases.push_back({kernel, "ring5wrap", "x", dtype});
    }
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.kernel + "_" + info.param.topology + "_" + info.param.axis + "_" +
                     dsl::DTypeName(info.param.dtype);
  for (auto& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, CollectiveCorrectness, ::testing::ValuesIn(AllCases()), CaseName);

TEST(CollectiveTiming, BidirectionalBeatsUnidirectionalOnAWrappedRing) {
  const dsl::Mesh mesh(testing::MakeTopology({8}, {true}));
  const kernels::ParamValues args = {{"bytes", 8 << 20}};
  auto ring = testing::Entry("all_gather_ring")
                  .make(mesh, testing::ParamsFor("all_gather_ring", args, /*functional=*/false));
  auto bidi = testing::Entry("all_gather_bidi")
                  .make(mesh, testing::ParamsFor("all_gather_bidi", args, /*functional=*/false));
  const auto ring_result = ring.program.Run(ring.inputs, TimingOnly());
  const auto bidi_result = bidi.program.Run(bidi.inputs, TimingOnly());
  ASSERT_TRUE(ring_result.ok && bidi_result.ok);
  const double ratio = static_cast<double>(bidi_result.time()) / ring_result.time();
  EXPECT_NEAR(ratio, 0.5, 0.05);
}

// One slow link (RunConfig::link_slowdown) on a wrapped ring. The unidirectional all-gather
// moves one block over every x+ link at each of its X-1 steps, and a step ends when the
// slowest lands, so every step runs at W / F: the bandwidth term (V/W)(X-1)/X becomes F
// times as long. The fixed costs (the hop latency, 1 us a step, and the chunks' pipeline
// fill) are not slowed: the nominal run measures them as its time beyond the formula, and
// the slow run must take F x the formula plus at most those (part of them overlaps the
// slow link's longer transfers). At 8 MiB they are ~6% of the nominal time.
TEST(CollectiveTiming, OneSlowLinkSlowsTheRingAllGatherAsTheFormulaSays) {
  const config::Topology topology = testing::MakeTopology({8}, {true});
  const dsl::Mesh mesh(topology);
  const uint64_t bytes = 8 << 20;
  auto ring = testing::Entry("all_gather_ring")
                  .make(mesh, testing::ParamsFor("all_gather_ring", {{"bytes", bytes}}, false));
  const double formula =
      static_cast<double>(bytes) / topology.ici().link_bandwidth_bytes_per_s() * 7 / 8;
  const auto nominal = ring.program.Run(ring.inputs, TimingOnly());
  ASSERT_TRUE(nominal.ok) << nominal.error;
  const double t_nominal = static_cast<double>(nominal.time()) * 1e-12;
  const double fixed = t_nominal - formula;
  EXPECT_GT(fixed, 0);
  EXPECT_LT(fixed, 0.1 * formula);
  for (const double factor : {2.0, 4.0}) {
    dsl::RunOptions options = TimingOnly();
    options.link_slowdown = {{3, "x+", factor}};
    const auto slow = ring.program.Run(ring.inputs, options);
    ASSERT_TRUE(slow.ok) << slow.error;
    const double t_slow = static_cast<double>(slow.time()) * 1e-12;
    EXPECT_GE(t_slow, factor * formula * (1 - 1e-6)) << factor;  // picosecond rounding
    EXPECT_LE(t_slow, factor * formula + fixed) << factor;
  }
  // The x- link of the same chip carries no bytes here, only the ring's signals, each one
  // 64-byte packet (docs/time-model.md, "Signals on the route"): slowing it 4x delays the
  // run by no more than the longer packet of one signal per step.
  dsl::RunOptions options = TimingOnly();
  options.link_slowdown = {{3, "x-", 4}};
  const auto unused = ring.program.Run(ring.inputs, options);
  ASSERT_TRUE(unused.ok) << unused.error;
  const double bandwidth = topology.ici().link_bandwidth_bytes_per_s();
  const base::Picoseconds longer = base::TransferTime(sim::kSignalBytes, bandwidth / 4) -
                                   base::TransferTime(sim::kSignalBytes, bandwidth);
  EXPECT_GT(unused.time(), nominal.time());
  EXPECT_LE(unused.time(), nominal.time() + 7 * longer);
}

TEST(CollectiveTiming, SameInputsGiveTheSameTraceBytes) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  std::string traces[2];
  for (int i = 0; i < 2; ++i) {
    auto w = testing::Entry("all_gather_bidi")
                 .make(mesh, testing::ParamsFor("all_gather_bidi", {{"bytes", 64 << 10}}));
    auto run = testing::RunWorkload(w, true, "det" + std::to_string(i));
    ASSERT_TRUE(run.result.ok);
    std::ifstream in(run.trace_path, std::ios::binary);
    traces[i].assign(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_FALSE(traces[0].empty());
  EXPECT_EQ(traces[0], traces[1]);
}

}  // namespace
}  // namespace tpusim
