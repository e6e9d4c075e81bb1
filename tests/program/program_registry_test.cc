// Programs as registry entries (tests/program/tiny_programs.cc registers family "tiny"):
// their kind and family, and the trace of one program run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "traces/trace_checker.h"

namespace tpusim {
namespace {

using ::testing::ElementsAre;

TEST(ProgramRegistry, EntriesHaveAKindAndFamiliesKeepRegistrationOrder) {
  const auto& registry = kernels::Registry::Get();
  ASSERT_NE(registry.Find("tiny/sync"), nullptr);
  EXPECT_EQ(registry.Find("tiny/sync")->kind, kernels::EntryKind::kProgram);
  EXPECT_EQ(registry.Find("all_gather_ring")->kind, kernels::EntryKind::kKernel);
  // Registered sync, async, f32: not the name order (async, f32, sync).
  EXPECT_THAT(registry.FamilyMembers("tiny"), ElementsAre("tiny/sync", "tiny/async", "tiny/f32"));
  EXPECT_TRUE(registry.FamilyMembers("tiny_rows").empty());
  const auto families = registry.Families();
  EXPECT_NE(std::find(families.begin(), families.end(), "tiny"), families.end());
  EXPECT_THAT(registry.ExpandFamilies({"all_gather_ring", "tiny", "tiny_rows"}),
              ElementsAre("all_gather_ring", "tiny/sync", "tiny/async", "tiny/f32", "tiny_rows"));
}

TEST(ProgramRegistry, AProgramEntryRunsAndMatchesItsReference) {
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}));
  kernels::Workload w = testing::Entry("tiny/sync").make(mesh, testing::ParamsFor("tiny/sync", {}));
  EXPECT_FALSE(w.program.is_kernel());
  auto run = testing::RunWorkload(w, true, "tiny_sync");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const dsl::Comparison c =
      dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(c.equal) << c.detail;
}

// One trace per program run: each step is a slice on the core track named after its op,
// and the async all_gather runs on a track of its own, overlapping the dot issued after
// its start.
TEST(ProgramTrace, StepsAreNamedSlicesAndTheAsyncGatherOverlapsTheDot) {
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}));
  kernels::Workload w =
      testing::Entry("tiny/async")
          .make(mesh, testing::ParamsFor("tiny/async", {{"m", 1024}, {"k", 1024}, {"n", 1024}},
                                         /*functional=*/false));
  auto run = testing::RunWorkload(w, false, "tiny_async");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto slices =
      traces::PairSlices(traces::DecodePerfettoTrace(traces::ReadTraceFile(run.trace_path)));

  std::vector<std::string> core_steps, core_tops;
  const traces::DecodedSlice* first_dot = nullptr;
  const traces::DecodedSlice* gather = nullptr;
  for (const auto& s : slices) {
    if (s.track.rfind("chip 0 ", 0) != 0) continue;
    const bool core = s.track.size() >= 5 && s.track.substr(s.track.size() - 5) == "/core";
    // Depth 0 on the core track is the whole program, named after it; its steps nest under it.
    if (core && s.depth == 0) core_tops.push_back(s.name);
    if (core && s.depth == 1) core_steps.push_back(s.name);
    if (core && s.depth == 1 && s.name == "dot" && !first_dot) first_dot = &s;
    if (!core && s.track.find("async") != std::string::npos && s.depth == 0 &&
        s.name.rfind("all_gather x", 0) == 0 && !gather)
      gather = &s;
  }
  // The local dot, the wait for the gather (all_gather_done), the dot of the gathered rows.
  EXPECT_THAT(core_tops, ElementsAre("tiny"));
  EXPECT_THAT(core_steps, ElementsAre("dot", "join all_gather x", "dot"));
  ASSERT_NE(first_dot, nullptr);
  ASSERT_NE(gather, nullptr);
  // The gather started no later than the dot and was still moving when the dot ended.
  EXPECT_LE(gather->begin_ns, first_dot->begin_ns);
  EXPECT_GT(gather->end_ns, first_dot->end_ns);
}

// The program steps on chip 0's core track, in order.
std::vector<std::string> CoreSteps(const std::string& trace_path) {
  std::vector<std::string> steps;
  for (const auto& s :
       traces::PairSlices(traces::DecodePerfettoTrace(traces::ReadTraceFile(trace_path)))) {
    if (s.track.rfind("chip 0 ", 0) == 0 && s.track.substr(s.track.size() - 5) == "/core" &&
        s.depth == 1)
      steps.push_back(s.name);
  }
  return steps;
}

TEST(ProgramTrace, ABlockingCollectiveIsAStepOnTheCoreTrack) {
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}));
  kernels::Workload w = testing::Entry("tiny/sync")
                            .make(mesh, testing::ParamsFor("tiny/sync", {}, /*functional=*/false));
  auto run = testing::RunWorkload(w, false, "tiny_sync_trace");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const std::vector<std::string> steps = CoreSteps(run.trace_path);
  EXPECT_THAT(steps, ElementsAre("all_gather x", "dot"));
}

// seed003/d composes Pallas kernels: each pallas_call is a step named after its kernel.
TEST(ProgramTrace, PallasCallStepsAreNamedAfterTheirKernel) {
  const dsl::Mesh mesh(testing::MakeTopology({2, 2}, {false, false}));
  kernels::Workload w = testing::Entry("seed003/d")
                            .make(mesh, testing::ParamsFor("seed003/d", {}, /*functional=*/false));
  auto run = testing::RunWorkload(w, false, "seed003_d_trace");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const std::vector<std::string> steps = CoreSteps(run.trace_path);
  EXPECT_THAT(steps, ElementsAre("pallas_call all_gather_ring", "dynamic_slice",
                                 "pallas_call matmul", "pallas_call all_reduce_ring"));
}

}  // namespace
}  // namespace tpusim
