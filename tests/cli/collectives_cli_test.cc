// Where a program's collectives spend their time, on the command line: the run report names
// each collective's algorithm (chosen, or forced with --collective-algorithm), its bytes on
// the busiest link and the estimate's latency and bandwidth parts, in the summary, --json and
// the trace; a name that is no algorithm is refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::LastLineJson;
using testing::RunTpusim;

// A 1 KiB psum on v5e-8x16's x, a line of 8 chips.
const std::string kSmallPsum = "run lax/psum --topology v5e-8x16 --bytes 1K --timing-only --json";

TEST(CollectivesCli, TheReportNamesEachCollectivesAlgorithmAndWhereItsTimeWent) {
  const auto r = RunTpusim(kSmallPsum);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("collectives (device"));
  const auto j = LastLineJson(r.out);
  EXPECT_EQ(j["collective_algorithm"], "auto");
  ASSERT_EQ(j["collectives"].size(), 1u);
  const auto& c = j["collectives"][0];
  EXPECT_EQ(c["step"], "psum x");
  EXPECT_EQ(c["op"], "psum");
  EXPECT_THAT(std::string(c["algorithm"]), ::testing::AnyOf("direct", "recursive_doubling"));
  EXPECT_EQ(c["forced"], false);
  EXPECT_EQ(c["count"], 1);
  EXPECT_EQ(c["bytes"], 1024);
  // The program is the collective alone: its time is the run's.
  EXPECT_NEAR(c["total_ns"].get<double>(), j["sim_time_ns"].get<double>(), 1.0);
  // 1 KiB is latency bound: hops of 1 us, a few hundred ns of link time.
  EXPECT_GT(c["latency_ns"].get<double>(), 5000);
  EXPECT_LT(c["bandwidth_ns"].get<double>(), 1000);
  EXPECT_GE(c["busiest_link_bytes"].get<double>(), 1024);
}

TEST(CollectivesCli, CollectiveAlgorithmForcesOneOnEveryCollective) {
  const auto ring = RunTpusim(kSmallPsum + " --collective-algorithm ring");
  ASSERT_EQ(ring.exit_code, 0) << ring.out << ring.err;
  const auto j = LastLineJson(ring.out);
  EXPECT_EQ(j["collective_algorithm"], "ring");
  EXPECT_EQ(j["collectives"][0]["algorithm"], "ring");
  EXPECT_EQ(j["collectives"][0]["forced"], true);
  EXPECT_THAT(ring.out, HasSubstr("ring (forced)"));
  const auto chosen = LastLineJson(RunTpusim(kSmallPsum).out);
  EXPECT_GT(j["sim_time_ns"].get<double>(), 2 * chosen["sim_time_ns"].get<double>());
  // all_to_all has direct only: a run-wide ring leaves it direct, and the run goes on.
  const auto a2a = RunTpusim(
      "run lax/all_to_all --topology v5e-2x4 --bytes 8K --timing-only --json "
      "--collective-algorithm ring");
  ASSERT_EQ(a2a.exit_code, 0) << a2a.out << a2a.err;
  EXPECT_EQ(LastLineJson(a2a.out)["collectives"][0]["algorithm"], "direct");
}

TEST(CollectivesCli, AnUnknownAlgorithmIsRefusedWithTheNames) {
  const auto r = RunTpusim(kSmallPsum + " --collective-algorithm tree");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--collective-algorithm is 'tree'; use auto, bidi_ring, ring, "
                               "direct, recursive_doubling."));
  EXPECT_EQ(r.out, "");
}

TEST(CollectivesCli, RecursiveDoublingOnAGroupOfThreeFailsTheRunNamingTheFix) {
  const std::string topology = testing::TempPath("line3.textproto");
  {
    std::string t = topologies::PresetText("v5e-2x4");
    t.replace(t.find("shape: [2, 4]"), 13, "shape: [3]");
    t.replace(t.find("wraparound: [false, false]"), 26, "wraparound: [false]");
    std::ofstream(topology) << t;
  }
  const auto r = RunTpusim("run lax/psum --topology " + topology +
                           " --bytes 3K --timing-only --collective-algorithm recursive_doubling");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.out + r.err, HasSubstr("recursive_doubling needs a power-of-two number of devices "
                                       "per group, and x has 3. Choose ring, bidi_ring or direct"));
}

// The trace: each collective's kernel is a slice named after its algorithm, whose arguments
// are the estimate.
TEST(CollectivesCli, TheTraceAnnotatesEachCollective) {
  const std::string trace = testing::TempPath("psum.json");
  const auto r = RunTpusim(kSmallPsum + " --collective-algorithm direct --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(trace);
  const auto events = nlohmann::json::parse(in)["traceEvents"];
  int annotated = 0;
  for (const auto& e : events) {
    if (!e.contains("name") || e["name"] != "direct" || !e.contains("args")) continue;
    const auto& args = e["args"];
    EXPECT_EQ(args["algorithm"], "direct");
    EXPECT_EQ(args["chosen"], "forced");
    EXPECT_GT(std::stod(args["estimated latency ns"].get<std::string>()), 0);
    EXPECT_GE(std::stod(args["busiest link bytes"].get<std::string>()), 1024);
    ++annotated;
  }
  EXPECT_EQ(annotated, 128);  // every chip of v5e-8x16 runs the kernel
}

// On chips of chiplets (TPU7x) the mesh counts devices, and the run and compare headers give
// both counts, as the JSON does; on chips of one device they say chips.
TEST(CollectivesCli, HeadersCountDevicesOnChipsOfChiplets) {
  const auto program = RunTpusim(
      "run lax/all_gather --topology tpu7x-2x2x1 --axis chiplet "
      "--bytes 64K");
  ASSERT_EQ(program.exit_code, 0) << program.out << program.err;
  EXPECT_THAT(program.out,
              HasSubstr("lax/all_gather (program) on tpu7x-2x2x1 (4 chips, 8 devices)"));
  EXPECT_THAT(program.out, HasSubstr("matches the reference on all 8 devices"));
  const auto kernel =
      RunTpusim("run all_gather_ring --topology tpu7x-2x2x1 --axis chiplet --bytes 64K");
  ASSERT_EQ(kernel.exit_code, 0) << kernel.out << kernel.err;
  EXPECT_THAT(kernel.out,
              HasSubstr("all_gather_ring on tpu7x-2x2x1 (4 chips, 8 devices), axis 'chiplet'"));
  const auto json =
      RunTpusim("run all_gather_ring --topology tpu7x-2x2x1 --axis chiplet --bytes 64K --json");
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  const auto j = LastLineJson(json.out);
  EXPECT_EQ(j["chips"], 4);
  EXPECT_EQ(j["devices"], 8);
  const auto compare = RunTpusim(
      "compare all_gather_ring all_gather_bidi --topology tpu7x-2x2x1 "
      "--axis chiplet --bytes 64K");
  ASSERT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("on tpu7x-2x2x1, axis 'chiplet' (2 devices)"));
  const auto bench = RunTpusim(
      "bench all_gather_ring --topology tpu7x-2x2x1 --axis chiplet --min-bytes 64K "
      "--max-bytes 64K --timing-only");
  ASSERT_EQ(bench.exit_code, 0) << bench.out << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("on tpu7x-2x2x1 (4 chips, 8 devices)"));
  const auto chips = RunTpusim("run all_gather_ring --topology v5e-2x2 --axis x --bytes 64K");
  EXPECT_THAT(chips.out, HasSubstr("all_gather_ring on v5e-2x2 (4 chips), axis 'x'"));
  const auto chips_json =
      RunTpusim("run all_gather_ring --topology v5e-2x2 --axis x --bytes 64K --json");
  const auto v5e = LastLineJson(chips_json.out);
  EXPECT_EQ(v5e["chips"], 4);
  EXPECT_EQ(v5e["devices"], 4);
}

}  // namespace
}  // namespace tpusim
