// Programs on the command line: list shows them in their own section with the families;
// run, compare and bench take them as they take kernels; compare expands a family, allows
// a different output dtype and refuses a different contract. The tiny programs come from
// tests/program/tiny_programs.cc, built as a plugin.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::LastLineJson;
using ::testing::Not;
using testing::RunTpusim;

const std::string kTiny = std::string(" --load ") + TPUSIM_TINY_PROGRAMS;

TEST(ProgramCli, ListShowsKernelsProgramsAndFamiliesInSections) {
  const auto r = RunTpusim("list" + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t kernels = r.out.find("kernels:");
  const size_t programs = r.out.find("programs:");
  const size_t families = r.out.find("families");
  ASSERT_NE(kernels, std::string::npos) << r.out;
  ASSERT_NE(programs, std::string::npos) << r.out;
  ASSERT_NE(families, std::string::npos) << r.out;
  EXPECT_LT(kernels, programs);
  EXPECT_LT(programs, families);
  // Kernels above the programs heading, programs below it.
  EXPECT_LT(r.out.find("all_gather_ring"), programs);
  EXPECT_GT(r.out.find("tiny/sync"), programs);
  EXPECT_THAT(r.out.substr(families), HasSubstr("tiny/sync tiny/async tiny/f32"));
}

TEST(ProgramCli, RunReportsAProgramWithIciBytesAndPeakHbm) {
  const std::string trace = testing::TempPath("tiny.pftrace");
  const auto r =
      RunTpusim("run tiny/async --topology v5e-2x2 --m 64 --trace " + trace + " --json" + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("tiny/async (program)"));
  EXPECT_THAT(r.out, HasSubstr("ICI bytes/chip"));
  EXPECT_THAT(r.out, HasSubstr("peak HBM/chip"));
  const auto j = LastLineJson(r.out);
  EXPECT_EQ(j["kind"], "program");
  EXPECT_EQ(j["correct"], true);
  // Each chip sends its 32 x 128 bf16 half of x to the other chip of the axis: 8 KiB.
  EXPECT_DOUBLE_EQ(j["ici_bytes_per_chip"].get<double>(), 32 * 128 * 2);
  // At least x's block, w, the gathered x and the output live at once.
  EXPECT_GE(j["peak_hbm_bytes"].get<double>(), (32 * 128 + 128 * 128 + 64 * 128 * 2) * 2);
  testing::ExpectTraceValid(trace);
}

TEST(ProgramCli, KernelsReportIciBytesAndPeakHbmToo) {
  const auto r = RunTpusim("run all_gather_ring --topology v5e-2x2 --bytes 64K --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = LastLineJson(r.out);
  EXPECT_EQ(j["kind"], "kernel");
  // A 2-chip ring along x: each chip sends its 32 KiB shard once.
  EXPECT_DOUBLE_EQ(j["ici_bytes_per_chip"].get<double>(), 32 * 1024);
  EXPECT_GE(j["peak_hbm_bytes"].get<double>(), 64 * 1024 + 32 * 1024);
}

TEST(ProgramCli, CompareExpandsAFamilyAndShowsDifferingOutputDtypes) {
  const std::string dir = testing::TempPath("tiny-traces");
  const auto r =
      RunTpusim("compare tiny --topology v5e-2x2 --m 64 --json --trace-dir " + dir + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ICI/chip"));
  EXPECT_THAT(r.out, HasSubstr("peak HBM"));
  EXPECT_THAT(r.out, HasSubstr("out dtype"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["kernel"], "tiny/sync");  // registration order
  EXPECT_EQ(rows[1]["kernel"], "tiny/async");
  EXPECT_EQ(rows[2]["kernel"], "tiny/f32");
  EXPECT_EQ(rows[0]["out_dtype"], "bf16");
  EXPECT_EQ(rows[2]["out_dtype"], "f32");
  for (const auto& row : rows) {
    EXPECT_EQ(row["correct"], true) << row.dump();
    EXPECT_GT(row["ici_bytes_per_chip"].get<double>(), 0);
    EXPECT_GT(row["peak_hbm_bytes"].get<double>(), 0);
    std::string file = row["kernel"].get<std::string>();
    std::replace(file.begin(), file.end(), '/', '_');
    testing::ExpectTraceValid(dir + "/" + file + ".pftrace");
  }
}

TEST(ProgramCli, CompareWithOneOutputDtypeShowsNoDtypeColumn) {
  const auto r = RunTpusim("compare tiny/sync tiny/async --topology v5e-2x2 --timing-only" + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("out dtype")));
}

TEST(ProgramCli, CompareRefusesProgramsWithDifferentContracts) {
  const auto r = RunTpusim("compare tiny/sync tiny_rows --topology v5e-2x2" + kTiny);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "");  // refused before running
  EXPECT_THAT(r.err, HasSubstr("'tiny/sync' and 'tiny_rows' do not compute the same thing: their "
                               "types agree, but on the same inputs"));
  EXPECT_THAT(r.err, HasSubstr("tiny_rows: (bf16[64,128] P('x', None), bf16[128,128] P(None, "
                               "None)) -> (bf16[64,128] P('x', None))"));
  EXPECT_THAT(r.err, HasSubstr("tpusim compare --help"));
  // Same types, but relu(x @ w) is not x @ w: the host references tell them apart.
  EXPECT_THAT(r.err, HasSubstr("their host references differ ('tiny_rows' against "
                               "'tiny/sync'): output 0: element"));
}

// A program's PartitionSpecs are a schedule's choice: tiny_local computes tiny's problem
// but leaves y row-sharded. The header names the global problem, each row its specs.
TEST(ProgramCli, CompareTakesProgramsThatLayOutOneProblemDifferently) {
  const auto r = RunTpusim("compare tiny/sync tiny_local --topology v5e-2x2 --json" + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("(bf16[64,128], bf16[128,128]) -> (bf16[64,128]) on v5e-2x2"));
  EXPECT_THAT(r.out, HasSubstr("specs (in -> out)"));
  EXPECT_THAT(r.out, HasSubstr("  correct  P('x', None), P(None, None) -> P(None, None)\n"));
  EXPECT_THAT(r.out, HasSubstr("  correct  P('x', None), P(None, None) -> P('x', None)\n"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["specs"], "P('x', None), P(None, None) -> P(None, None)");
  EXPECT_EQ(rows[1]["specs"], "P('x', None), P(None, None) -> P('x', None)");
  for (const auto& row : rows)
    EXPECT_EQ(row["correct"], true) << row.dump();
}

TEST(ProgramCli, CompareWithOneLayoutShowsNoSpecsColumn) {
  const auto r = RunTpusim("compare tiny/sync tiny/async --topology v5e-2x2 --timing-only" + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("specs (in -> out)")));
  EXPECT_THAT(r.out, HasSubstr("(bf16[64,128] P('x', None), bf16[128,128] P(None, None)) -> "
                               "(bf16[64,128] P(None, None))"));
}

TEST(ProgramCli, CompareRefusesProgramsWhoseGlobalTypesDiffer) {
  const auto r =
      RunTpusim("compare tiny/sync mlp/dp --topology v5e-2x2 --m 64 --k 128 --n 256" + kTiny);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("'tiny/sync' and 'mlp/dp' do not compute the same thing: their "
                               "global input types or output shapes differ."));
}

// The four mlp layouts are one problem: compare runs them, checks every row against the
// one reference, and bounds the communicating layouts by the bytes they must move.
TEST(ProgramCli, CompareRunsTheMlpLayoutsSideBySide) {
  const auto r = RunTpusim("compare mlp --topology v5e-2x2 --m 64 --k 128 --n 256 --json" + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("specs (in -> out)"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 4u);
  const char* specs[] = {"P(), P(), P() -> P()", "P('x', None), P(), P() -> P('x', None)",
                         "P('x', None), P('x', None), P('x', None) -> P('x', None)",
                         "P(), P(None, 'x'), P('x', None) -> P()"};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["correct"], true) << rows[i].dump();
    EXPECT_EQ(rows[i]["specs"], specs[i]);
  }
  EXPECT_THAT(rows[1]["analytic_formula"].get<std::string>(), HasSubstr("no communication"));
  EXPECT_THAT(rows[2]["analytic_formula"].get<std::string>(), HasSubstr("(2 D H bytes)"));
  EXPECT_THAT(rows[3]["analytic_formula"].get<std::string>(), HasSubstr("(2 B D bytes)"));
  // A schedule never beats its bound.
  for (const auto& row : rows)
    EXPECT_LE(row["percent_of_bound"].get<double>(), 100.0) << row.dump();
}

// Every entry draws its inputs from one generator (kernels::EntryInput), so a program
// written elsewhere (a plugin here) compares with a shipped kernel of the same problem
// without copying its input formula, and the references decide.
TEST(ProgramCli, CompareRunsAPluginProgramBesideTheShippedKernelOfItsProblem) {
  const auto r = RunTpusim("compare matmul tiny/sync --topology v5e-2x2 --m 64 --k 128 --n 128" +
                           kTiny + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows)
    EXPECT_EQ(row["correct"], true) << row.dump();
}

// A user's f32 program checked against an exact reference: its DEFAULT-precision dot took
// one bf16 pass, and the report says so and names the flag that asks for six.
TEST(ProgramCli, AnF32MismatchFromOneBf16PassNamesTheFlag) {
  const auto one_pass = RunTpusim("run tiny_exact --topology v5e-2x2 --json" + kTiny);
  EXPECT_EQ(one_pass.exit_code, 1) << one_pass.err;  // wrong data
  const auto report = LastLineJson(one_pass.out);
  EXPECT_EQ(report["correct"], false);
  EXPECT_THAT(report["mismatch"].get<std::string>(),
              HasSubstr("ran at DEFAULT precision: one bf16 pass, as on the chip"));
  EXPECT_THAT(report["mismatch"].get<std::string>(), HasSubstr("(flag --precision HIGHEST)"));
  const auto six_passes =
      RunTpusim("run tiny_exact --topology v5e-2x2 --precision HIGHEST --json" + kTiny);
  ASSERT_EQ(six_passes.exit_code, 0) << six_passes.err;
  EXPECT_EQ(LastLineJson(six_passes.out)["correct"], true) << six_passes.out;
}

TEST(ProgramCli, CompareRefusesAKernelAndAProgramThatComputeDifferentThings) {
  const auto r =
      RunTpusim("compare matmul tiny_rows --topology v5e-2x2 --m 64 --k 128 --n 128" + kTiny);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("'matmul' and 'tiny_rows' do not compute the same thing: their "
                               "types agree, but on the same inputs"));
}

TEST(ProgramCli, BenchSweepsTheBatchSizeOfSeveralPrograms) {
  const std::string csv = testing::TempPath("tiny.csv");
  const auto r = RunTpusim(
      "bench tiny/sync tiny/async --topology v5e-2x2 --sweep m=64:256:x2 --timing-only --json "
      "--csv " +
      csv + kTiny);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("sweeping m"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 6u);  // m = 64, 128, 256 for each program
  const int64_t ms[] = {64, 64, 128, 128, 256, 256};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["m"], ms[i]);
    EXPECT_EQ(rows[i]["kernel"], i % 2 ? "tiny/async" : "tiny/sync");
    EXPECT_EQ(rows[i]["completed"], true);
  }
  // A bigger batch gathers more rows: more time and more bytes over ICI.
  EXPECT_GT(rows[4]["sim_time_ns"].get<double>(), rows[0]["sim_time_ns"].get<double>());
  EXPECT_GT(rows[4]["ici_bytes_per_chip"].get<double>(),
            rows[0]["ici_bytes_per_chip"].get<double>());
  std::ifstream file(csv);
  std::string header;
  std::getline(file, header);
  EXPECT_EQ(header.rfind("entry,m,sim_time_ns", 0), 0u) << header;
}

TEST(ProgramCli, SweepsAreSpelledOneWayForBytesToo) {
  const auto r = RunTpusim(
      "bench all_gather_ring --topology v5e-2x2 --sweep bytes=64K:128K --timing-only --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1]["bytes"], 131072);
}

struct BadProgramArgs {
  std::string args;
  std::string message;
  std::string command;
};

void PrintTo(const BadProgramArgs& b, std::ostream* os) {
  *os << "tpusim " << b.args;
}

class ProgramCliBadArguments : public ::testing::TestWithParam<BadProgramArgs> {};

TEST_P(ProgramCliBadArguments, FailWithOneReasonAndAUsageHint) {
  const auto r = RunTpusim(GetParam().args + kTiny);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_THAT(r.err, HasSubstr("tpusim " + GetParam().command + " --help"));
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Programs, ProgramCliBadArguments,
    ::testing::Values(
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep q=1:2",
                       "--sweep cannot sweep 'q': tiny/sync takes no parameter 'q'; write "
                       "PARAM=FROM:TO[:xF]",
                       "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep dtype=1:2",
                       "--sweep cannot sweep 'dtype': tiny/sync's parameter 'dtype' is enum, not "
                       "int or bytes",
                       "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep 64",
                       "--sweep '64' names no parameter; write NAME=V1,V2,... or "
                       "NAME=FROM:TO[:xF]",
                       "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep m=256:64",
                       "--sweep m FROM is above TO", "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep m=64:256:2",
                       "the factor is written xF", "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep m=64:256:x1",
                       "--sweep's factor must be an integer of at least 2", "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep m=63:256",
                       "tiny programs: m 63 does not split over the 2 devices of axis 'x'; use a "
                       "multiple of 2. (flag --sweep m=FROM)",
                       "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2 --sweep m=64:256 --min-bytes 1K",
                       "give either --sweep or --min-bytes/--max-bytes", "bench"},
        BadProgramArgs{"bench tiny/sync --topology v5e-2x2", "give the sweep: --sweep", "bench"},
        BadProgramArgs{"run tiny/synk --topology v5e-2x2",
                       "unknown kernel 'tiny/synk'; known kernels:", "run"},
        BadProgramArgs{"compare tiny/synk --topology v5e-2x2", "tiny. `tpusim list`", "compare"}));

TEST(ProgramCli, TheSharedOptionsHaveOneHelpTextInEveryCommand) {
  std::vector<std::string> helps;
  for (const char* command : {"run", "compare", "bench", "bench matmul"})
    helps.push_back(RunTpusim(std::string(command) + " --help").out);
  // Boost wraps the help at 80 columns: each text is checked up to where it may wrap.
  for (const char* line :
       {"-t [ --topology ] arg", "preset name (see `tpusim topologies`)", "--time-limit arg (=60)",
        "stop a run after this many seconds", "--collective-algorithm arg (=auto)",
        "--no-race-check", "--load arg", "load a shared library of kernels or", "--dtype"}) {
    for (const auto& help : helps)
      EXPECT_THAT(help, HasSubstr(line)) << help;
  }
  // The parameters are the entries' own: each command says where to find them, and bench
  // matmul (which runs one kernel) lists matmul's.
  for (size_t i = 0; i < 3; ++i)
    EXPECT_THAT(helps[i], HasSubstr("every kernel and program declares its own")) << helps[i];
  EXPECT_THAT(helps[3], HasSubstr("parameters of matmul"));
  EXPECT_THAT(helps[3], HasSubstr("--precision DEFAULT|HIGH|HIGHEST"));
  EXPECT_THAT(helps[3], ::testing::Not(HasSubstr("--bm")));  // --blocks sets the blocks
  EXPECT_THAT(helps[2], HasSubstr("--sweep PARAM=FROM:TO[:xF]"));
  EXPECT_THAT(helps[2], HasSubstr("PARAM=V1,V2,..."));
}

}  // namespace
}  // namespace tpusim
