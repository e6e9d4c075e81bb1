// --slow-chip, --slow-link and compare --perturb through the tpusim binary: a chip named by
// coordinates is the chip of that index, a slow chip's memories slow a collective that
// computes nothing, a slow link slows what crosses it, the psum stays right with a straggler
// while its variant without capacity semaphores is caught, and --perturb finds the same.
// The timing they give is checked against the formula in tests/kernels/
// collective_correctness_test.cc; their errors are in cli_test.cc's BadArgs table.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::LastLineJson;
using testing::RunTpusim;

double SimNs(const std::string& args) {
  const auto r = RunTpusim(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out << r.err;
  return r.exit_code == 0 ? LastLineJson(r.out)["sim_time_ns"].get<double>() : -1;
}

TEST(SlowChip, CoordinatesNameTheChipOfThatIndex) {
  // Chip (1, 0) of a 2x2 mesh is chip 2 (row-major).
  const std::string run = "run matmul --topology v5e-2x2 --m 512 --k 512 --n 512 --timing-only";
  EXPECT_EQ(SimNs(run + " --slow-chip 1,0=3"), SimNs(run + " --slow-chip 2=3"));
  EXPECT_NE(SimNs(run + " --slow-chip 1,0=3"), SimNs(run));
}

TEST(SlowChip, SlowsTheChipsMemoriesNotOnlyItsCompute) {
  // The ring all-gather computes nothing: only the slow chip's HBM and VMEM, at 1/100 of
  // their bandwidth (below the link's), can make it slower.
  const std::string run = "run all_gather_ring --topology v5e-2x2 --bytes 4M --timing-only";
  const double nominal = SimNs(run);
  EXPECT_GT(SimNs(run + " --slow-chip 0=100"), 1.5 * nominal);
  // At 2 the memories stay faster than the link; the ring pays only the chunks' longer
  // time in and out of the slow chip's memories at each step.
  const double two = SimNs(run + " --slow-chip 0=2");
  EXPECT_GT(two, nominal);
  EXPECT_LT(two, 1.2 * nominal);
}

TEST(SlowLink, SlowsOnlyWhatCrossesIt) {
  // all_gather_ring over y: chip (0, 0)'s y+ link carries a block at every step, and its x+
  // link nothing.
  const std::string run =
      "run all_gather_ring --topology v5e-2x2 --axis y --bytes 4M --timing-only";
  const double nominal = SimNs(run);
  EXPECT_GT(SimNs(run + " --slow-link 0,0:y+=4"), 2 * nominal);
  EXPECT_EQ(SimNs(run + " --slow-link 0,0:x+=4"), nominal);
}

// A 5-chip ring with wraparound, as a topology file the CLI reads.
std::string Ring5() {
  const std::string path = testing::TempPath("slow-ring5.textproto");
  std::string text;
  google::protobuf::TextFormat::PrintToString(testing::MakeTopology({5}, {true}), &text);
  std::ofstream(path) << text;
  return path;
}

TEST(SlowChip, PsumStaysCorrectAndItsVariantWithoutCapacityIsCaught) {
  // As tests/kernels/collective_library_test.cc's PsumCapacity, through the flag.
  const std::string args = " --topology " + Ring5() + " --bytes 20K --dtype f32 --slow-chip 2=1e4";
  const auto psum = RunTpusim("run all_reduce_psum" + args);
  EXPECT_EQ(psum.exit_code, 0) << psum.out << psum.err;
  EXPECT_THAT(psum.out, HasSubstr("matches the reference on all 5 chips"));
  const auto broken = RunTpusim("run all_reduce_psum_no_capacity" + args + " --no-race-check");
  EXPECT_EQ(broken.exit_code, 1) << broken.out << broken.err;
}

TEST(ComparePerturb, ShowsTheRobustScheduleAndCatchesTheFragileOne) {
  const std::string command = "compare all_reduce_psum all_reduce_psum_no_capacity --topology " +
                              Ring5() +
                              " --bytes 20K --dtype f32 --no-race-check --perturb 3 "
                              "--perturb-factor 1e4 --perturb-seed 7 --json";
  const auto r = RunTpusim(command);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the variant without capacity fails
  EXPECT_THAT(r.out, HasSubstr("--perturb: 3 runs of each entry, one chip 10000x slower in each"));
  EXPECT_THAT(r.out, HasSubstr("median slow"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("no_capacity .* with chip [0-4] slow"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  // The psum waits for its straggler's adds, 10^4 times slower: many times its own time.
  const double median = rows[0]["perturbed_median_slowdown"].get<double>();
  const double worst = rows[0]["perturbed_worst_slowdown"].get<double>();
  EXPECT_GT(median, 10);
  EXPECT_GE(worst, median);
  // The same seed slows the same chips: the same table (the JSON line holds wall times).
  const auto table = [](const std::string& out) {
    return out.substr(0, out.rfind('\n', out.size() - 2));
  };
  EXPECT_EQ(table(RunTpusim(command).out), table(r.out));
  EXPECT_THAT(table(r.out), HasSubstr("correct; FAILED: race with chip"));
}

// --perturb-links slows one seeded link direction per run, as --slow-link would: the run's
// slowdown is the one --slow-link gives that link, and the seed draws more than one link.
TEST(ComparePerturb, LinksSlowsOneSeededLinkAsSlowLinkDoes) {
  const std::string args = " --topology v5e-2x2 --axis y --bytes 4M --timing-only";
  const auto r = RunTpusim("compare all_gather_ring all_gather_bidi" + args +
                           " --perturb 1 --perturb-links --perturb-factor 4 --perturb-seed 3 "
                           "--json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      r.out, match, std::regex("one link 4x slower in each \\(links ([0-9]+:[xy][+-]), seed 3\\)")))
      << r.out;
  const std::string link = match[1];
  const double nominal = SimNs("run all_gather_ring" + args);
  const double slowed = SimNs("run all_gather_ring" + args + " --slow-link " + link + "=4");
  const auto rows = LastLineJson(r.out);
  EXPECT_NEAR(rows[0]["perturbed_median_slowdown"].get<double>(), slowed / nominal, 1e-9);

  const auto many = RunTpusim("compare all_gather_ring all_gather_bidi" + args +
                              " --perturb 8 --perturb-links --perturb-seed 3");
  ASSERT_EQ(many.exit_code, 0) << many.out << many.err;
  ASSERT_TRUE(std::regex_search(many.out, match, std::regex("\\(links ([^,]*), seed 3\\)")));
  std::set<std::string> drawn;
  std::stringstream links(match[1].str());
  for (std::string one; links >> one;)
    drawn.insert(one);
  EXPECT_GT(drawn.size(), 1u) << match[1];

  const auto none = RunTpusim(
      "compare all_gather_ring all_gather_bidi --topology v5e-1x1 "
      "--bytes 4K --perturb 2 --perturb-links");
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
  EXPECT_THAT(none.err, HasSubstr("--perturb-links finds no link to slow: v5e-1x1 has no ICI "
                                  "link between chips; drop --perturb-links to slow chips "
                                  "instead."));
}

struct BadCompare {
  std::string args;
  std::string message;
};

TEST(ComparePerturb, BadValuesAreRefusedWithTheFix) {
  const std::string compare =
      "compare all_gather_ring all_gather_bidi --topology v5e-2x2 "
      "--bytes 64K ";
  for (const BadCompare& bad : {
           BadCompare{"--perturb 0",
                      "--perturb is 0; give how many perturbed runs of each entry to make, 1 or "
                      "more (e.g. --perturb 5)."},
           BadCompare{"--perturb 2 --perturb-factor 0",
                      "--perturb-factor is 0; give how many times slower the perturbed chip (or "
                      "link) runs, a finite number greater than 0 (e.g. 2)."},
           BadCompare{"--perturb-seed 3",
                      "--perturb-factor, --perturb-seed and --perturb-links shape the runs of "
                      "--perturb N; add --perturb N, or leave them out."},
           BadCompare{"--perturb-links",
                      "--perturb-factor, --perturb-seed and --perturb-links shape the runs of "
                      "--perturb N; add --perturb N, or leave them out."},
           BadCompare{"--perturb x", "--perturb takes a number, and 'x' is not one"},
       }) {
    const auto r = RunTpusim(compare + bad.args);
    EXPECT_EQ(r.exit_code, 2) << bad.args << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(bad.message)) << bad.args;
  }
}

}  // namespace
}  // namespace tpusim
