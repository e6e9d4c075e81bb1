// Sweeps across machines and into pictures: --shard and --merge give back the plain run's
// rows, through GNU parallel (a real engine, started here) and through the Slurm job
// script of docs/sweep.md run as each array task; --plot draws with gnuplot; the README's
// and docs/sweep.md's commands run as written.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
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
using testing::RunShell;
using testing::RunTpusim;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool Have(const std::string& tool) {
  return RunShell("command -v " + tool + " >/dev/null").exit_code == 0;
}

// A fresh directory with `tpusim` on a PATH of its own and build/tools/tpusim/tpusim, so
// the docs' commands run there as written.
std::string WorkDir(const std::string& name) {
  const std::string dir = testing::TempPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/bin");
  std::filesystem::create_directories(dir + "/build/tools/tpusim");
  std::filesystem::create_directories(dir + "/docs");
  std::filesystem::create_symlink(TPUSIM_BINARY, dir + "/bin/tpusim");
  std::filesystem::create_symlink(TPUSIM_BINARY, dir + "/build/tools/tpusim/tpusim");
  return dir;
}

testing::CommandResult RunIn(const std::string& dir, const std::string& script) {
  return RunShell("cd '" + dir + "' && PATH='" + dir + "/bin':\"$PATH\" && " + script);
}

// Every fenced block of `language` in `doc` (README.md or docs/...), in order.
std::vector<std::string> DocBlocks(const std::string& doc, const std::string& language) {
  const std::string text = ReadFile(std::string(TPUSIM_SOURCE_DIR) + "/" + doc);
  std::vector<std::string> blocks;
  const std::string fence = "```" + language + "\n";
  for (size_t start = text.find(fence); start != std::string::npos;
       start = text.find(fence, start)) {
    start += fence.size();
    const size_t end = text.find("```", start);
    blocks.push_back(text.substr(start, end - start));
    start = end;
  }
  return blocks;
}

// The rows as the simulation made them: everything but the host's wall time and memory.
std::vector<nlohmann::json> Simulated(const nlohmann::json& rows) {
  std::vector<nlohmann::json> kept;
  for (nlohmann::json row : rows) {
    for (const char* host :
         {"wall_seconds", "events_per_second", "process_seconds", "peak_rss_mib"})
      row.erase(host);
    kept.push_back(row);
  }
  return kept;
}

void ExpectSameRows(const nlohmann::json& merged, const nlohmann::json& plain) {
  ASSERT_EQ(merged["points"], plain["points"]);
  ASSERT_EQ(merged["rows"].size(), plain["rows"].size());
  EXPECT_EQ(Simulated(merged["rows"]), Simulated(plain["rows"]));
  EXPECT_GT(merged["rows"][0]["sim_time_ns"].get<double>(), 0);
}

constexpr const char* kSweep =
    "sweep ppermute --topology v5e-2x2,v5e-4x4 --param bytes=4K:64K:x4 --timing-only";

TEST(SweepShards, MergedShardsAreThePlainRun) {
  const std::string dir = WorkDir("shards");
  const auto plain = RunTpusim(std::string(kSweep) + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::vector<std::string> files;
  for (int i = 1; i <= 4; ++i) {  // 6 points in 4 shards: two get one point each
    const std::string file = dir + "/shard-" + std::to_string(i) + ".json";
    const auto shard =
        RunTpusim(std::string(kSweep) + " --json --shard " + std::to_string(i) + "/4 > " + file);
    ASSERT_EQ(shard.exit_code, 0) << shard.err;
    files.push_back(file);
  }
  EXPECT_EQ(nlohmann::json::parse(ReadFile(files[3]))["rows"].size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(ReadFile(files[3]))["shard"], "4/4");
  const auto merged = RunTpusim("sweep --merge " + files[0] + " " + files[1] + " " + files[2] +
                                " " + files[3] + " --json");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  ExpectSameRows(LastLineJson(merged.out), LastLineJson(plain.out));
  // A merged sweep prints as any other.
  const auto table =
      RunTpusim("sweep --merge " + files[1] + " " + files[0] + " " + files[3] + " " + files[2]);
  EXPECT_THAT(table.out, HasSubstr("# 6 of 6 points completed and checked out"));

  // A shard missing: the rest, and the points to run again.
  const auto partial = RunTpusim("sweep --merge " + files[0] + " " + files[2]);
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_THAT(partial.out, HasSubstr("# 3 of 3 points completed"));
  EXPECT_THAT(partial.err, HasSubstr("points 1, 3, 5 (3 of 6) are in none of the files: run "
                                     "their shards again"));
  const auto twice = RunTpusim("sweep --merge " + files[0] + " " + files[0]);
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, HasSubstr("point 0 is in both"));

  const std::string other = dir + "/other.json";
  RunTpusim("sweep ppermute --topology v5e-2x2 --param bytes=4K,8K --timing-only --json > " +
            other);
  const auto mixed = RunTpusim("sweep --merge " + files[0] + " " + other);
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_THAT(mixed.err, HasSubstr("is a shard of another sweep than"));
  const auto not_json = RunTpusim("sweep --merge " + std::string(TPUSIM_SOURCE_DIR) + "/README.md");
  EXPECT_EQ(not_json.exit_code, 2);
  EXPECT_THAT(not_json.err, HasSubstr("README.md' is not the --json output of tpusim sweep"));
  const auto extra = RunTpusim("sweep --merge " + files[0] + " --param bytes=4K");
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_THAT(extra.err, HasSubstr("--merge takes the shards' files only"));
}

// GNU parallel, a real engine started here, runs the shards; the merge is the plain run.
TEST(SweepShards, GnuParallelRunsTheShards) {
  if (!Have("parallel")) GTEST_SKIP() << "GNU parallel is not installed (scripts/bootstrap)";
  const std::string dir = WorkDir("parallel");
  const auto plain = RunTpusim(std::string(kSweep) + " --json");
  const auto run = RunIn(dir, "parallel --will-cite -j 2 tpusim " + std::string(kSweep) +
                                  " --shard {}/3 --json '>' shard-{}.json ::: 1 2 3 && "
                                  "tpusim sweep --merge shard-*.json --json");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ExpectSameRows(LastLineJson(run.out), LastLineJson(plain.out));
}

// docs/sweep.md's blocks: a local sweep, the GNU parallel one over an ssh login file (here
// holding ':', this machine), and the Slurm job array, its script run as Slurm runs each
// array task (Slurm itself does not start inside CI).
TEST(SweepDocs, TheCommandsOfDocsSweepRunAsWritten) {
  const auto blocks = DocBlocks("docs/sweep.md", "sh");
  ASSERT_EQ(blocks.size(), 5u);
  const std::string dir = WorkDir("docs");
  std::ofstream(dir + "/hosts.txt") << ":\n";

  const auto local = RunIn(dir, blocks[0]);
  ASSERT_EQ(local.exit_code, 0) << blocks[0] << local.out << local.err;
  const std::string csv = ReadFile(dir + "/chunks.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 10);  // header, 3 x 3 points
  // The measurement of a point's cost: 50 points, each with its process time.
  const auto overhead = RunIn(dir, blocks[4]);
  ASSERT_EQ(overhead.exit_code, 0) << blocks[4] << overhead.err;
  const auto points = nlohmann::json::parse(ReadFile(dir + "/overhead.json"))["rows"];
  ASSERT_EQ(points.size(), 50u);
  EXPECT_GT(points[49]["process_seconds"].get<double>(), points[49]["wall_seconds"].get<double>());

  if (!Have("parallel")) GTEST_SKIP() << "GNU parallel is not installed (scripts/bootstrap)";
  const auto parallel = RunIn(dir, blocks[1]);
  ASSERT_EQ(parallel.exit_code, 0) << blocks[1] << parallel.out << parallel.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/all_gather_bidi.svg"));
  const auto merged = RunIn(dir, "tpusim sweep --merge shard-*.json --json");
  const std::string sweep = blocks[1].substr(blocks[1].find("sweep all_gather_bidi"));
  const std::string plain_args =
      std::regex_replace(sweep.substr(0, sweep.find("--shard")), std::regex("\\\\\n"), " ");
  const auto plain = RunTpusim(plain_args + " --json");
  ExpectSameRows(LastLineJson(merged.out), LastLineJson(plain.out));

  // The job script, as each task of its array; then the block that submits it and merges.
  std::ofstream(dir + "/sweep.sbatch") << blocks[2];
  std::smatch array;
  ASSERT_TRUE(std::regex_search(blocks[2], array, std::regex("#SBATCH --array=1-([0-9]+)")))
      << blocks[2];
  const std::string tasks = array[1];
  // sbatch's stand-in runs the script once per array task, with the variables Slurm sets.
  const std::string sbatch = "sbatch() { for script; do :; done; for i in $(seq " + tasks +
                             "); do SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=" + tasks +
                             " SLURM_CPUS_PER_TASK=2 bash \"$script\" || return; done; }; ";
  const auto slurm = RunIn(dir, "rm -f shard-*.json && " + sbatch + blocks[3]);
  ASSERT_EQ(slurm.exit_code, 0) << blocks[3] << slurm.out << slurm.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/rows.csv"));
  const auto slurm_merged = RunIn(dir, "tpusim sweep --merge shard-*.json --json");
  ExpectSameRows(LastLineJson(slurm_merged.out), LastLineJson(plain.out));
}

// The README's sweep, with the plot it shows: the same series as the committed image.
TEST(SweepDocs, TheReadmePlotIsWhatItsCommandDraws) {
  if (!Have("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (scripts/bootstrap)";
  std::vector<std::string> sweeps;
  for (const std::string& block : DocBlocks("README.md", "sh")) {
    if (block.find(" sweep ") != std::string::npos) sweeps.push_back(block);
  }
  ASSERT_EQ(sweeps.size(), 1u);
  const std::string dir = WorkDir("readme");
  const auto run = RunIn(dir, sweeps[0]);
  ASSERT_EQ(run.exit_code, 0) << sweeps[0] << run.out << run.err;
  std::smatch image;
  ASSERT_TRUE(std::regex_search(sweeps[0], image, std::regex("--plot (docs/[a-z_]+\\.svg)")));
  const std::string drawn = ReadFile(dir + "/" + image[1].str());
  const std::string committed = ReadFile(std::string(TPUSIM_SOURCE_DIR) + "/" + image[1].str());
  // The key: a series per topology and its bound (tick labels follow the timing model,
  // so the image is compared by what it shows, not byte for byte).
  const auto key = [](const std::string& svg) {
    std::set<std::string> found;
    const std::regex text("<text>(topology=[^<]*)</text>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
         ++it)
      found.insert((*it)[1]);
    return found;
  };
  EXPECT_EQ(key(drawn).size(), 6u);  // three topologies, each with its bound
  EXPECT_EQ(key(drawn), key(committed));
  EXPECT_THAT(committed, HasSubstr("simulated time (ms)"));
  EXPECT_THAT(ReadFile(std::string(TPUSIM_SOURCE_DIR) + "/README.md"),
              HasSubstr("](" + image[1].str() + ")"));
}

TEST(SweepPlot, DrawsSvgAndPngWithTheBoundDashed) {
  if (!Have("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (scripts/bootstrap)";
  const std::string svg = testing::TempPath("sweep.svg");
  const std::string png = testing::TempPath("sweep.png");
  std::filesystem::remove(svg);
  const auto r = RunTpusim(std::string(kSweep) + " --plot " + svg);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadFile(svg);
  EXPECT_THAT(text, HasSubstr("<svg"));
  EXPECT_THAT(text, HasSubstr("topology=v5e-4x4 bound"));
  EXPECT_THAT(text, HasSubstr("simulated time (us)"));
  EXPECT_THAT(text, HasSubstr("stroke-dasharray"));  // the bounds
  const auto p = RunTpusim(std::string(kSweep) + " --plot " + png);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(ReadFile(png).substr(1, 3), "PNG");
}

TEST(SweepPlot, WithoutGnuplotThePlotIsRefusedBeforeAnythingRuns) {
  const auto r =
      RunShell("PATH=/nonexistent " + std::string(TPUSIM_BINARY) + " " + kSweep + " --plot x.svg");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--plot needs gnuplot, which is not on PATH; install it"));
  EXPECT_EQ(r.out, "");
}

// bench draws busbw against size, as nccl-tests users plot it.
TEST(BenchPlot, DrawsBusBandwidthAgainstSize) {
  if (!Have("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (scripts/bootstrap)";
  const std::string svg = testing::TempPath("bench.svg");
  const auto r = RunTpusim(
      "bench all_gather_ring all_gather_bidi --topology v5e-4x4 --sweep bytes=4K:1M:x4 "
      "--timing-only --plot " +
      svg);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string text = ReadFile(svg);
  EXPECT_THAT(text, HasSubstr("bus bandwidth (GB/s)"));
  EXPECT_THAT(text, HasSubstr("all_gather_bidi at its bound"));
  EXPECT_THAT(text, HasSubstr("size (V)"));
}

}  // namespace
}  // namespace tpusim
