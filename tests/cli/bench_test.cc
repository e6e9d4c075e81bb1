// tpusim bench: one row per size with the bound and the simulator's speed, a summary line,
// the rows as JSON on the last line with --json and as CSV with --csv; bad sweeps exit 2
// with one reason and a usage hint.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::RunTpusim;

using testing::LastLineJson;

TEST(Bench, SweepsSizesAndPrintsRowsSummaryJsonAndCsv) {
  const std::string csv = testing::TempPath("bench.csv");
  const auto r = RunTpusim(
      "bench all_gather_bidi --topology v5e-4x4 --axis y --min-bytes 4K --max-bytes 512K "
      "--factor 4 --timing-only --json --csv " +
      csv);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# tpusim bench all_gather_bidi on v5e-4x4 (16 chips)"));
  EXPECT_THAT(r.out, HasSubstr("%bound"));
  EXPECT_THAT(r.out, HasSubstr("Mev/s"));
  EXPECT_THAT(r.out, HasSubstr("# 4 of 4 sizes completed; avg bus bandwidth"));
  EXPECT_THAT(r.out, HasSubstr("% of bound min"));
  EXPECT_THAT(r.out, HasSubstr("wall"));
  // stderr is not a terminal here, so no progress line is drawn.
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;

  const auto rows = LastLineJson(r.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 4u);  // 4K, 16K, 64K, 256K; the next, 1M, is above 512K
  const uint64_t sizes[] = {4096, 16384, 65536, 262144};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["bytes"], sizes[i]);
    EXPECT_EQ(rows[i]["completed"], true);
    EXPECT_GT(rows[i]["sim_time_ns"].get<double>(), 0);
    EXPECT_GT(rows[i]["analytic_ns"].get<double>(), 0);
    EXPECT_GT(rows[i]["percent_of_bound"].get<double>(), 0);
    EXPECT_LE(rows[i]["percent_of_bound"].get<double>(), 100.5);
    EXPECT_GT(rows[i]["events"].get<double>(), 0);
    EXPECT_GT(rows[i]["wall_seconds"].get<double>(), 0);
    EXPECT_GT(rows[i]["peak_rss_mib"].get<double>(), 0);
  }
  std::ifstream file(csv);
  std::stringstream stream;
  stream << file.rdbuf();
  const std::string text = stream.str();
  // The columns are the metrics' JSON keys (tools/tpusim/run_metrics.cc).
  EXPECT_THAT(text, HasSubstr("bytes,sim_time_ns,analytic_ns,percent_of_bound,algbw_gbps,"
                              "busbw_gbps,ici_bytes_per_chip,peak_hbm_bytes"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);  // header + 4 rows
}

TEST(Bench, FunctionalRowsCheckTheData) {
  const auto r =
      RunTpusim("bench all_gather_ring --topology v5e-2x2 --min-bytes 64K --max-bytes 128K --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["correct"], true);
  EXPECT_EQ(rows[1]["correct"], true);
}

TEST(Bench, ARowOverItsSpeedBudgetFailsTheBench) {
  const auto r = RunTpusim(
      "bench all_gather_ring --topology v5e-2x2 --min-bytes 64K --max-bytes 64K --timing-only "
      "--max-wall 0.000001 --max-rss 100000");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("over --max-wall 1e-06 s"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("over --max-rss")));
  EXPECT_THAT(r.out, HasSubstr("(FAILURES above)"));
}

struct BadBench {
  std::string args;
  std::string message;
};

void PrintTo(const BadBench& b, std::ostream* os) {
  *os << "tpusim " << b.args;
}

class BenchBadArguments : public ::testing::TestWithParam<BadBench> {};

TEST_P(BenchBadArguments, FailWithOneReasonAndAUsageHint) {
  const auto r = RunTpusim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_THAT(r.err, HasSubstr("tpusim bench --help"));
  EXPECT_EQ(r.out, "");  // nothing ran
}

INSTANTIATE_TEST_SUITE_P(
    Bench, BenchBadArguments,
    ::testing::Values(
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --min-bytes 2M --max-bytes 1M",
                 "--min-bytes 2M is above --max-bytes 1M"},
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --min-bytes 1K --max-bytes 1M "
                 "--factor 1",
                 "--factor 1 must be an integer of at least 2"},
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --min-bytes 1K --max-bytes 1M "
                 "--factor 1.5",
                 "--factor"},
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --min-bytes 1001 --max-bytes 1M",
                 "bytes 1001 does not split into 4 equal shards of whole bf16 elements over axis "
                 "'x' (size 4); use a multiple of 8 bytes, e.g. 1000 or 1008. (flag --min-bytes)"},
        BadBench{"bench all_gather_rong --topology v5e-4x4 --min-bytes 1K --max-bytes 1M",
                 "unknown kernel 'all_gather_rong'; known kernels:"},
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --axis z --min-bytes 1K "
                 "--max-bytes 1M",
                 "mesh axis 'z' does not exist"},
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --max-bytes 1M",
                 "--min-bytes is required"},
        BadBench{"bench all_gather_bidi --min-bytes 1K --max-bytes 1M", "--topology is required"},
        BadBench{"bench all_gather_bidi --topology v5e-4x4 --min-bytes lots --max-bytes 1M",
                 "--min-bytes 'lots' is not a size"}));

}  // namespace
}  // namespace tpusim

namespace tpusim {
namespace {

// bench matmul sweeps block sizes: as on the chip (the Pallas matmul guide's table),
// small blocks are slowest, because each of their many grid steps pays a fixed cost.
TEST(BenchMatmul, SmallBlocksAreSlowestAsOnTheChip) {
  const auto r = testing::RunTpusim(
      "bench matmul --topology v5e-2x2 --m 1024 --k 1024 --n 1024 "
      "--blocks 128x128x128,256x256x256,512x1024x1024 --timing-only --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("%step cost"));
  const auto rows = testing::LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_GT(rows[0]["sim_time_ns"].get<double>(), rows[1]["sim_time_ns"].get<double>());
  EXPECT_GT(rows[1]["sim_time_ns"].get<double>(), rows[2]["sim_time_ns"].get<double>());
  EXPECT_EQ(rows[0]["grid_steps"].get<double>(), 512);
}

// bench matmul with a --sweep is bench like any entry's: --sweep is written as sweep's
// --param, as a range or as a list.
TEST(BenchMatmul, SweepsAParameterLikeAnyEntry) {
  const auto r = testing::RunTpusim(
      "bench matmul --topology v5e-2x2 --sweep m=256,1024 --k 256 --n 256 --timing-only --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("sweeping m"));
  const auto rows = testing::LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["m"], 256);
  EXPECT_EQ(rows[1]["m"], 1024);
  EXPECT_GT(rows[1]["flops"].get<double>(), rows[0]["flops"].get<double>());
}

TEST(BenchMatmul, AnUnknownPrecisionIsABadArgument) {
  const auto r = testing::RunTpusim(
      "bench matmul --topology v5e-2x2 --m 256 --k 256 --n 256 --dtype f32 --precision EXACT");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("matmul: parameter 'precision' is 'EXACT', not one of "
                                          "DEFAULT, HIGH, HIGHEST"));
  EXPECT_THAT(r.err, ::testing::HasSubstr("(flag --precision)"));
}

TEST(BenchMatmul, ABadBlockListSaysHowToWriteOne) {
  const auto r = testing::RunTpusim(
      "bench matmul --topology v5e-2x2 --m 256 --k 256 --n 256 --blocks 128x128");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("is not BMxBKxBN"));
}

}  // namespace
}  // namespace tpusim
