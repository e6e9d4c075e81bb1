// tpusim sweep: the cartesian product of parameter values, topologies and run options, each
// point a `tpusim run` in its own process; the table, CSV and JSON rows; a failed point is
// a row with its error; bad sweeps are refused before anything runs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::LastLineJson;
using testing::RunTpusim;

// The sweep's --json rows.
nlohmann::json Rows(const std::string& args) {
  const auto r = RunTpusim("sweep " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return LastLineJson(r.out)["rows"];
}

// `tpusim run ARGS --json`'s simulated time.
double RunTime(const std::string& args) {
  const auto r = RunTpusim("run " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return LastLineJson(r.out)["sim_time_ns"].get<double>();
}

TEST(Sweep, RunsTheProductFirstParameterFastestEachPointAsRunWouldRunIt) {
  const auto rows = Rows(
      "all_gather_ring --topology v5e-2x2,v5e-4x4 --param bytes=64K:256K:x4 "
      "--param direction=left,right --timing-only -j 2");
  ASSERT_EQ(rows.size(), 8u);
  const char* topologies[] = {"v5e-2x2", "v5e-4x4"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row["point"], i);
    EXPECT_EQ(row["params"]["bytes"], i % 2 ? 262144 : 65536);
    EXPECT_EQ(row["params"]["direction"], i / 2 % 2 ? "right" : "left");
    EXPECT_EQ(row["topology"], topologies[i / 4]);
    EXPECT_EQ(row["entry"], "all_gather_ring");
    EXPECT_TRUE(row["error"].is_null()) << row.dump();
    EXPECT_TRUE(row["correct"].is_null());  // timing-only: not checked
    EXPECT_GT(row["peak_hbm_bytes"].get<double>(), 0);
    EXPECT_GT(row["process_seconds"].get<double>(), 0);
    EXPECT_GT(row["peak_rss_mib"].get<double>(), 0);
  }
  // The same simulated times as the runs themselves.
  EXPECT_EQ(rows[5]["sim_time_ns"].get<double>(),
            RunTime("all_gather_ring --topology v5e-4x4 --bytes 256K --direction left "
                    "--timing-only"));
  EXPECT_EQ(rows[2]["sim_time_ns"].get<double>(),
            RunTime("all_gather_ring --topology v5e-2x2 --bytes 64K --direction right "
                    "--timing-only"));
  // A bigger V takes longer; the bound grows with it.
  EXPECT_GT(rows[1]["sim_time_ns"].get<double>(), rows[0]["sim_time_ns"].get<double>());
  EXPECT_GT(rows[1]["analytic_ns"].get<double>(), rows[0]["analytic_ns"].get<double>());
}

TEST(Sweep, SweepsRunOptionsAndSeveralEntries) {
  const auto rows = Rows(
      "all_gather_ring all_gather_bidi --topology v5e-2x2 --bytes 64K "
      "--param timing_only=true,false --param uninitialized_memory=nan,zero");
  ASSERT_EQ(rows.size(), 8u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["entry"], i < 4 ? "all_gather_ring" : "all_gather_bidi");
    // Functional points check their data; timing-only ones do not.
    if (i % 2 == 0) {
      EXPECT_TRUE(rows[i]["correct"].is_null()) << rows[i].dump();
    } else {
      EXPECT_EQ(rows[i]["correct"], true) << rows[i].dump();
    }
    EXPECT_EQ(rows[i]["params"]["uninitialized_memory"], i / 2 % 2 ? "zero" : "nan");
  }
  // Timing-only and functional runs take the same simulated time.
  EXPECT_EQ(rows[0]["sim_time_ns"], rows[1]["sim_time_ns"]);
}

TEST(Sweep, SweepsSlowChipsAndLinksAsRunWouldRunThem) {
  // --slow-link's values hold ':' yet are a list (a range's ends are numbers); chips by
  // coordinates hold ',' and are separated by ';'.
  const std::string base = "all_gather_ring --topology v5e-2x2 --bytes 1M --timing-only";
  const auto links = Rows(base + " --param slow_link=0:x+=1,0:x+=4");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[1]["params"]["slow_link"], "0:x+=4");
  EXPECT_EQ(links[1]["sim_time_ns"], RunTime(base + " --slow-link 0:x+=4"));
  EXPECT_GT(links[1]["sim_time_ns"].get<double>(), links[0]["sim_time_ns"].get<double>());
  const auto chips = Rows(base + " --param 'slow_chip=0=1;1,1=100'");
  ASSERT_EQ(chips.size(), 2u);
  EXPECT_EQ(chips[1]["sim_time_ns"], RunTime(base + " --slow-chip 1,1=100"));
}

TEST(Sweep, SweepsAnHloModulesParameters) {
  const std::string module =
      std::string(TPUSIM_SOURCE_DIR) + "/examples/hlo/mlp_tensor_parallel.hlo";
  const auto rows = Rows(module +
                         " --topology v5e-2x4 --timing-only --param "
                         "'device_order=0,1,2,3,4,5,6,7;7,6,5,4,3,2,1,0'");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["params"]["device_order"], "7,6,5,4,3,2,1,0");
  for (const auto& row : rows) {
    EXPECT_TRUE(row["error"].is_null()) << row.dump();
    EXPECT_GT(row["sim_time_ns"].get<double>(), 0);
  }
}

TEST(Sweep, APointThatFailsIsARowWithItsErrorAndTheSweepGoesOn) {
  const auto r = RunTpusim(
      "sweep all_gather_ring --topology v5e-2x2 --param bytes=1001,64K --timing-only "
      "--param time_limit=1e-9,60");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // 1001 bytes do not split into shards; 1 ns is too short for any run; 64K in 60 s runs.
  EXPECT_THAT(r.out, HasSubstr("does not split into 2 equal shards"));
  EXPECT_THAT(r.out, HasSubstr("simulated-time limit"));
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  EXPECT_THAT(r.out, HasSubstr("# 1 of 4 points completed and checked out (FAILURES above)"));
  const auto json = RunTpusim(
      "sweep all_gather_ring --topology v5e-2x2 --param bytes=1001,64K --timing-only --json");
  EXPECT_EQ(json.exit_code, 1);
  const auto rows = LastLineJson(json.out)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0]["error"].get<std::string>(), HasSubstr("use a multiple of"));
  EXPECT_TRUE(rows[1]["error"].is_null());
}

TEST(Sweep, PrintsATableOrCsvWithEveryMetric) {
  const auto table =
      RunTpusim("sweep ppermute --topology v5e-2x2 --param bytes=4K,8K,16K --timing-only");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("# tpusim sweep ppermute on v5e-2x2, sweeping bytes: 3 points"));
  for (const char* header : {"bytes", "time", "bound", "%bound", "ICI/chip", "peak HBM", "data"})
    EXPECT_THAT(table.out, HasSubstr(header));
  EXPECT_THAT(table.out, HasSubstr("# 3 of 3 points completed and checked out\n"));
  // Not a terminal: no progress bar.
  EXPECT_EQ(table.err.find('\r'), std::string::npos) << table.err;

  const auto csv =
      RunTpusim("sweep ppermute --topology v5e-2x2 --param bytes=4K,8K,16K --timing-only --csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("point,bytes,topology,entry,sim_time_ns,analytic_ns,percent_of_bound,", 0),
            0u)
      << header;
  EXPECT_THAT(header, HasSubstr(",peak_hbm_bytes,"));
  EXPECT_THAT(header, HasSubstr(",correct,wall_seconds,"));
  EXPECT_EQ(header.substr(header.size() - 6), ",error");
  std::string row;
  std::getline(lines, row);
  EXPECT_EQ(row.rfind("0,4096,v5e-2x2,ppermute,", 0), 0u) << row;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 4);
}

// A terminal gets the bar: points done of all, time elapsed, the time left.
TEST(Sweep, DrawsAProgressBarOnATerminal) {
  if (testing::RunShell("command -v script").exit_code != 0) GTEST_SKIP() << "no script(1)";
  const auto r = testing::RunShell("script -qec '" + std::string(TPUSIM_BINARY) +
                                   " sweep ppermute --topology v5e-2x2 --param bytes=4K,8K "
                                   "--timing-only -j 1' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("0/2 points"));
  EXPECT_THAT(r.out, HasSubstr("elapsed"));
  EXPECT_THAT(r.out, HasSubstr("\r\033[K"));
  EXPECT_THAT(r.out, HasSubstr("# 2 of 2 points completed"));
}

struct BadSweep {
  std::string args;
  std::string message;
};

void PrintTo(const BadSweep& b, std::ostream* os) {
  *os << "tpusim sweep " << b.args;
}

class SweepBadArguments : public ::testing::TestWithParam<BadSweep> {};

// Refused before anything runs: exit 2, one sentence naming the parameter and the fix.
TEST_P(SweepBadArguments, FailBeforeRunningAnythingNamingTheParameterAndTheFix) {
  const auto r = RunTpusim("sweep " + GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, SweepBadArguments,
    ::testing::Values(
        BadSweep{
            "all_gather_ring --topology v5e-2x2 --param chunk_bytes=4K,8K",
            "--param chunk_bytes: all_gather_ring takes no parameter 'chunk_bytes' (it "
            "takes axis, bytes, dtype, direction); sweep a parameter every entry takes, a "
            "run option (timing_only, time_limit, wall_limit, collective_algorithm, slow_chip, "
            "slow_link, "
            "no_race_check"},
        BadSweep{"all_gather_ring all_gather_bidi --topology v5e-2x2 --bytes 64K --param "
                 "direction=left,right",
                 "all_gather_bidi takes no parameter 'direction'"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param slow_link=0:x+=2,0:x+",
                 "--slow-link is '0:x+'; give CHIP:DIRECTION=FACTOR pairs"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=64K,lots",
                 "--param bytes=lots: all_gather_ring: parameter 'bytes' is 'lots'"},
        BadSweep{"reduce_scatter_ring --topology v5e-2x2 --bytes 64K --param "
                 "chunks_in_flight=1,0",
                 "--param chunks_in_flight=0: reduce_scatter_ring: parameter "
                 "'chunks_in_flight' is 0, out of its range: allowed 1 to 16"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --bytes 64K --param dtype=bf16,f64",
                 "--param dtype=f64: all_gather_ring: parameter 'dtype' is 'f64', not one of"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --bytes 64K --param "
                 "uninitialized_memory=nan,ones",
                 "--param uninitialized_memory=ones: --uninitialized-memory is 'ones'; use nan "
                 "or zero."},
        BadSweep{"all_gather_ring --topology v5e-2x2 --bytes 64K --param time_limit=1,-1",
                 "--param time_limit=-1: --time-limit -1 is out of range"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --bytes 64K --param timing_only=yes",
                 "--param timing_only=yes: --timing-only is a flag without a value; sweep it "
                 "as timing_only=true,false."},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=1M:64K",
                 "--param bytes FROM is above TO (1M:64K), so the range is empty"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K,,8K",
                 "--param bytes has an empty value in '4K,,8K'"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=",
                 "--param bytes has an "
                 "empty value"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param 64K",
                 "--param '64K' names no "
                 "parameter; write NAME=V1,V2"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K:1M:4",
                 "the factor is written xF"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --bytes 64K --param bytes=4K,8K",
                 "--param bytes sweeps the parameter --bytes also sets; drop one of the two."},
        BadSweep{"all_gather_ring --topology v5e-2x2 --timing-only --bytes 64K --param "
                 "timing_only=true,false",
                 "--param timing_only sweeps the run option --timing-only also sets"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K --param bytes=8K",
                 "--param bytes is given twice"},
        BadSweep{"all_gather_ring --topology v5e-2x2,v5e-9x9 --param bytes=4K",
                 "unknown topology 'v5e-9x9'"},
        BadSweep{"all_gather_ring --param bytes=4K", "--topology is required"},
        BadSweep{"--topology v5e-2x2 --param bytes=4K", "name the entry to sweep"},
        BadSweep{"all_gather_rong --topology v5e-2x2 --param bytes=4K",
                 "unknown kernel 'all_gather_rong'"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K,8K --shard 3/2",
                 "--shard '3/2' is not i/N with 1 <= i <= N"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K,8K --csv --json",
                 "give one of --csv and --json"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K,8K --plot rows.pdf",
                 "--plot 'rows.pdf' is neither .svg nor .png"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K --plot one.svg",
                 "--plot needs a swept dimension"},
        BadSweep{"all_gather_ring --topology v5e-2x2 --param bytes=4K -j 0",
                 "--jobs must be at least 1"}));

}  // namespace
}  // namespace tpusim
