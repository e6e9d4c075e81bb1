// The tpusim binary: bad arguments get one clear line and a usage hint; a run prints the
// summary and, with --json, one JSON object on the last line.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::RunTpusim;

using testing::LastLineJson;

TEST(Cli, RunPrintsTheSummaryAndJson) {
  const std::string trace = testing::TempPath("ring.pftrace");
  const auto r = RunTpusim("run all_gather_ring --topology v5e-2x2 --axis y --bytes 64K --trace " +
                           trace + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("simulated time"));
  EXPECT_THAT(r.out, HasSubstr("analytic bound"));
  EXPECT_THAT(r.out, HasSubstr("matches the reference on all 4 chips"));
  const auto j = LastLineJson(r.out);
  for (const char* key : {"kernel", "topology", "chips", "axis", "bytes", "sim_time_ns",
                          "analytic_ns", "correct", "trace"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["kernel"], "all_gather_ring");
  EXPECT_EQ(j["chips"], 4);
  EXPECT_EQ(j["bytes"], 65536);
  EXPECT_EQ(j["correct"], true);
  EXPECT_GT(j["sim_time_ns"].get<double>(), 0);
  EXPECT_EQ(j["trace"], trace);
  testing::ExpectTraceValid(trace);
}

TEST(Cli, TopologiesListsThePresets) {
  const auto r = RunTpusim("topologies");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("v5e-16x16"));
  EXPECT_THAT(r.out, HasSubstr("256"));
  EXPECT_THAT(r.out, HasSubstr("x=yes y=yes"));
  EXPECT_THAT(r.out, HasSubstr("v5e-4x4"));
  EXPECT_THAT(r.out, HasSubstr("x=no y=no"));
  // The full pods (docs/references.md §2).
  EXPECT_THAT(r.out, ::testing::ContainsRegex("v5p-16x20x28 +8960"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("tpu7x-16x24x24 +18432"));  // devices: two per chip
  // The twisted tori (docs/model.md, "Twisted tori").
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("v5p-4x4x8-twisted +128 .*x=yes y=yes z=yes, twisted"));
}

// A preset as a file to copy and edit: it loads as it is, and gives the mesh its rules give.
TEST(Cli, TopologiesTextPrintsAPresetAsAFile) {
  const auto r = RunTpusim("topologies --text v5p-16x20x28");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("name: \"v5p-16x20x28\""));
  EXPECT_THAT(r.out, HasSubstr("generation: V5P"));
  EXPECT_THAT(r.out, HasSubstr("shape: [16, 20, 28]"));
  EXPECT_THAT(r.out, HasSubstr("wraparound: [true, true, true]"));
  EXPECT_EQ(topologies::DeviceCount(topologies::ParseTopology(r.out, "printed")), 8960u);
  const auto bad = RunTpusim("topologies --text v5e-9x9");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err,
              HasSubstr("--text v5e-9x9 names no preset; `tpusim topologies` lists them."));
}

// --slices N runs N copies of the preset joined by its DCN; the slice axis is a mesh axis.
TEST(Cli, SlicesJoinCopiesOfThePresetOverTheDcn) {
  const auto r =
      RunTpusim("run all_reduce_ring --topology v5e-2x4 --slices 2 --axis slice --bytes 1M --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = LastLineJson(r.out);
  EXPECT_EQ(j["topology"], "v5e-2x4-2slices");
  EXPECT_EQ(j["chips"], 16);
  EXPECT_EQ(j["ici_bytes_per_chip"], 0);  // every byte crossed the DCN
  EXPECT_EQ(j["correct"], true);
  const auto bad = RunTpusim("run all_reduce_ring --topology v4-4x4x4 --slices 2 --axis slice");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("field 'dcn' is missing"));
  const auto sweep = RunTpusim("sweep all_gather_ring --topology v5e-2x4 --slices 2 --axis x");
  EXPECT_NE(sweep.exit_code, 0);
  EXPECT_THAT(sweep.err, HasSubstr("--slices is not swept yet; give a topology file with "
                                   "multislice { slices: N } instead"));
}

struct BadArgs {
  std::string args;
  std::string message;
};

void PrintTo(const BadArgs& b, std::ostream* os) {
  *os << "tpusim " << b.args;
}

class CliBadArguments : public ::testing::TestWithParam<BadArgs> {};

TEST_P(CliBadArguments, FailWithOneReasonAndAUsageHint) {
  const auto r = RunTpusim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  // The hint names the entry when the error is about one of its parameters.
  EXPECT_THAT(r.err, ::testing::ContainsRegex("Try 'tpusim run (all_gather_ring )?--help'"));
}

INSTANTIATE_TEST_SUITE_P(
    Run, CliBadArguments,
    ::testing::Values(
        BadArgs{"run all_gather_rong --topology v5e-2x2 --bytes 64K",
                "unknown kernel 'all_gather_rong'; known kernels: ag_matmul_blocking"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --axis z --bytes 64K",
                "mesh axis 'z' does not exist"},
        BadArgs{"run all_gather_ring --topology v5e-4x4 --bytes 1001",
                "bytes 1001 does not split into 4 equal shards of whole bf16 elements over axis "
                "'x' (size 4); use a multiple of 8 bytes, e.g. 1000 or 1008. (flag --bytes)"},
        BadArgs{"run all_gather_ring --topology v5e-4x4 --bytes lots",
                "parameter 'bytes' is 'lots', not a size in bytes"},
        BadArgs{"run all_gather_ring --bytes 64K", "--topology is required"},
        BadArgs{"run all_gather_ring --topology v5e-4x4 --bytes 64K --dtype f64",
                "parameter 'dtype' is 'f64', not one of bf16, f32, int8, int32"},
        BadArgs{"run all_gather_ring --topology v5e-4x4 --bytes 64K --frobnicate",
                "unrecognised option '--frobnicate'"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --uninitialized-memory ones",
                "--uninitialized-memory is 'ones'; use nan or zero."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --out-of-bounds-reads nan",
                "--out-of-bounds-reads is 'nan'; use raise or uninitialized."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --grid-seed -3",
                "--grid-seed is '-3'; give a whole number"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 3",
                "--slow-chip is '3'; give CHIP=FACTOR pairs"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 1=2,x=3",
                "--slow-chip is '1=2,x=3'; give CHIP=FACTOR pairs"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 4=2",
                "--slow-chip names chip 4, and the slice has 4 chips, numbered from 0 to 3."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 1=0",
                "--slow-chip gives chip 1 the factor 0; a factor multiplies"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 0,2=2",
                "--slow-chip names chip (0, 2), and axis 'y' has 2 chips, numbered from 0 to 1."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 0,0,0=2",
                "--slow-chip names chip (0, 0, 0), but the mesh has 2 axes; give 2 coordinates, "
                "or one chip index."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-chip 1=2,",
                "--slow-chip is '1=2,'; give CHIP=FACTOR pairs"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-link 0=2",
                "--slow-link is '0=2'; give CHIP:DIRECTION=FACTOR pairs separated by commas"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-link 0,1:x+",
                "--slow-link is '0,1:x+'; give CHIP:DIRECTION=FACTOR pairs"},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-link 0,0:q+=2",
                "--slow-link names direction 'q+' of chip (0, 0); give a mesh axis and + or -, "
                "e.g. 'x+', 'y+'."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-link 1,0:x+=2",
                "--slow-link names the x+ link of chip (1, 0), which does not exist: axis 'x' "
                "has no wraparound and the chip is at its edge; name a link the slice has."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-link 4:x+=2",
                "--slow-link names chip 4, and the slice has 4 chips, numbered from 0 to 3."},
        BadArgs{"run all_gather_ring --topology v5e-2x2 --bytes 64K --slow-link 0:x+=-1",
                "--slow-link gives the x+ link of chip 0 the factor -1; a factor divides the "
                "link's bandwidth"},
        BadArgs{"run all_gather_ring --topology v5e-4x4 --bytes 64K -%canonical_option%",
                "'-%canonical_option%' holds a '%'"}));

TEST(Cli, TheInterpretModeChecksAreFlags) {
  // A race-free kernel passes with every check and with each switched off or changed.
  for (const char* flags : {"", " --no-race-check", " --uninitialized-memory zero",
                            " --out-of-bounds-reads uninitialized", " --grid-seed 42"}) {
    const auto r =
        RunTpusim(std::string("run all_gather_ring --topology v5e-2x2 --bytes 64K") + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("matches the reference on all 4 chips")) << flags;
  }
  const auto compare = RunTpusim(
      "compare all_gather_ring all_gather_bidi --topology v5e-2x2 --bytes 64K --no-race-check");
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  const auto help = RunTpusim("run --help");
  EXPECT_THAT(help.out, HasSubstr("--no-race-check"));
  EXPECT_THAT(help.out, HasSubstr("--uninitialized-memory"));
  EXPECT_THAT(help.out, HasSubstr("--out-of-bounds-reads"));
  EXPECT_THAT(help.out, HasSubstr("--grid-seed"));
  // The JSON report says how the run was checked.
  const auto json = RunTpusim(
      "run all_gather_ring --topology v5e-2x2 --bytes 64K --out-of-bounds-reads uninitialized "
      "--uninitialized-memory zero --json");
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  const auto checks = LastLineJson(json.out)["checks"];
  EXPECT_EQ(checks["out_of_bounds_reads"], "uninitialized");
  EXPECT_EQ(checks["uninitialized_memory"], "zero");
  EXPECT_EQ(checks["race_check"], true);
  EXPECT_TRUE(checks["grid_seed"].is_null());
}

TEST(Cli, SlowChipMultipliesThatChipsComputeTime) {
  // Every chip computes the same matmul on its own, so the slowest sets the time.
  const std::string run =
      "run matmul --topology v5e-2x2 --m 512 --k 512 --n 512 --timing-only --json";
  const auto nominal = RunTpusim(run);
  const auto slowed = RunTpusim(run + " --slow-chip 2=3");
  ASSERT_EQ(nominal.exit_code, 0) << nominal.err;
  ASSERT_EQ(slowed.exit_code, 0) << slowed.err;
  const double base = LastLineJson(nominal.out)["sim_time_ns"].get<double>();
  const double slow = LastLineJson(slowed.out)["sim_time_ns"].get<double>();
  EXPECT_GT(slow, 2 * base);  // compute dominates, and chip 2's takes 3x
  EXPECT_LT(slow, 3.5 * base);
}

TEST(Cli, TimeLimitFailureNamesTheFlagThatRaisesIt) {
  // The library names the run option (time_limit); the CLI adds the flag that sets it.
  const auto r = RunTpusim("run all_gather_ring --topology v5e-2x2 --bytes 64M --time-limit 1e-6");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAILED (time limit)"));
  EXPECT_THAT(r.out, HasSubstr("Raise the run's time limit (time_limit)"));
  EXPECT_THAT(r.out, HasSubstr("(flag --time-limit)"));
}

TEST(Cli, MalformedTopologyFileNamesFileFieldAndReason) {
  const std::string path = testing::TempPath("bad.textproto");
  std::ofstream(path) << "chip { clock_hz: 1e9 }\nmesh { shape: [4] }\n";
  const auto r = RunTpusim("run all_gather_ring --topology " + path + " --bytes 64K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(path));
  EXPECT_THAT(r.err, HasSubstr("chip.hbm"));
}

TEST(Cli, UnknownTopologyListsPresets) {
  const auto r = RunTpusim("run all_gather_ring --topology v5e-3x3 --bytes 64K");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown topology 'v5e-3x3'"));
  EXPECT_THAT(r.err, HasSubstr("v5e-4x4"));
}

}  // namespace
}  // namespace tpusim

namespace tpusim {
namespace {

TEST(CliCompare, RunsEachKernelOnIdenticalInputsAndPrintsOneRowEach) {
  const std::string dir = testing::TempPath("compare-traces");
  const auto r = RunTpusim(
      "compare all_gather_ring all_gather_bidi --topology v5e-2x2 --axis y --bytes 64K "
      "--trace-dir " +
      dir + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("exposed comm"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["kernel"], "all_gather_ring");
  EXPECT_EQ(rows[1]["kernel"], "all_gather_bidi");
  EXPECT_DOUBLE_EQ(rows[0]["speedup"].get<double>(), 1.0);
  for (const auto& row : rows) {
    EXPECT_EQ(row["correct"], true);
    EXPECT_EQ(row["contract"], rows[0]["contract"]);
    // Collectives without compute spend their whole run waiting on communication.
    EXPECT_GT(row["exposed_comm_percent"].get<double>(), 50.0);
    EXPECT_GT(row["busiest_link_utilisation"].get<double>(), 0.0);
    testing::ExpectTraceValid(dir + "/" + row["kernel"].get<std::string>() + ".pftrace");
  }
}

TEST(CliCompare, KernelsWithDifferentContractsAreRefused) {
  const auto r = RunTpusim("compare all_gather_ring ppermute --topology v5e-2x2 --bytes 64K");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("'all_gather_ring' and 'ppermute' do not compute the same thing: "
                               "their PartitionSpecs differ"));
  EXPECT_THAT(r.err, HasSubstr("ppermute: (bf16[32768] P('x')) -> (bf16[32768] P('x'))"));
}

}  // namespace
}  // namespace tpusim

namespace tpusim {
namespace {

TEST(CliCompare, MatmulSchedulesTakeTheProblemAndASecondAxis) {
  const auto r = RunTpusim(
      "compare agw_matmul_ar agw_matmul_ar_fused --topology v5e-2x2 --axis x --axis2 y "
      "--m 256 --k 512 --n 1024 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows)
    EXPECT_EQ(row["correct"], true) << row.dump();
}

TEST(CliCompare, UnknownSecondAxisIsABadArgument) {
  const auto r = RunTpusim(
      "compare agw_matmul_ar agw_matmul_ar_fused --topology v5e-2x2 --axis x --axis2 z "
      "--m 256 --k 512 --n 1024");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("mesh axis 'z' does not exist"));
}

}  // namespace
}  // namespace tpusim
