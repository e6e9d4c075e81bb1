// The CLI's flags come from the entries' parameter declarations: `run ENTRY --help` lists
// them, a kernel's own parameter is a flag that changes the run, and an unknown, mistyped
// or out-of-range value is one line naming the flag and what it allows (exit code 2).
// compare and bench take the flags of all their entries, but a flag that is set must be a
// parameter of every one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::RunTpusim;

const std::string kPlugin = TPUSIM_TEST_PLUGIN;

// The JSON on the last line of `args`' output (a --json run), which must succeed.
nlohmann::json JsonOf(const std::string& args) {
  const auto r = RunTpusim(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out << r.err;
  return r.exit_code == 0 ? testing::LastLineJson(r.out) : nlohmann::json::object();
}

// `help` with each run of spaces and newlines made one space: Boost wraps descriptions.
std::string Flat(const std::string& help) {
  std::string flat;
  for (const char c : help) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!flat.empty() && flat.back() != ' ')) flat += space ? ' ' : c;
  }
  return flat;
}

TEST(ParamFlags, RunKernelHelpListsItsParametersWithTypeDefaultRangeAndDescription) {
  const auto r = RunTpusim("run all_gather_ring --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string help = Flat(r.out);
  for (const char* text :
       {"parameters of all_gather_ring [type, unit; default; allowed values]:",
        "--axis TEXT mesh axis the collective runs over [string; default x]",
        "--bytes SIZE V, the size of the full (gathered) array: 4096, 64K, 16M, 1G [bytes; "
        "required; at least 1]",
        "--dtype bf16|f32|int8|int32 element type [enum; default bf16; one of bf16, f32, int8, "
        "int32]",
        "--direction right|left the ring neighbour each device sends to (at axis index + 1, or "
        "- 1) [enum; default right; one of right, left]"}) {
    EXPECT_THAT(help, HasSubstr(text)) << text;
  }
  EXPECT_THAT(help, ::testing::Not(HasSubstr("--chunk-bytes")));
  EXPECT_THAT(help, ::testing::Not(HasSubstr("--bm N")));

  const std::string reduce = Flat(RunTpusim("run reduce_scatter_ring --help").out);
  EXPECT_THAT(reduce, HasSubstr("--chunk-bytes SIZE the most bytes one chunk of a block holds "
                                "(one VMEM slot), in whole elements (rounded down) [bytes; default "
                                "auto (half of VMEM over the "
                                "slots, at most 4 MiB); 1 to 1073741824 (1 GiB)]"));
  EXPECT_THAT(reduce, HasSubstr("--chunks-in-flight N chunks each ring step keeps in flight, each "
                                "in its own double-buffered VMEM slots [int, chunks; default 2; "
                                "1 to 16]"));
  EXPECT_THAT(reduce, HasSubstr("--dtype bf16|f32|int32 element type; no int8, whose partial "
                                "sums would overflow"));

  const std::string matmul = Flat(RunTpusim("run matmul --help").out);
  EXPECT_THAT(matmul, HasSubstr("--bm N block rows [int, elements; default auto (up to 512"));
  EXPECT_THAT(matmul, HasSubstr("--precision DEFAULT|HIGH|HIGHEST dots on f32"));
}

TEST(ParamFlags, HelpWithoutAnEntrySaysWhereTheParametersAre) {
  const auto r = RunTpusim("run --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("every kernel and program declares its own"));
  EXPECT_THAT(r.out, HasSubstr("--chunk-bytes"));
}

// A kernel's own parameter, set through the CLI alone, changes the run.
TEST(ParamFlags, AKernelsOwnParametersChangeItsTiming) {
  const std::string base =
      "run reduce_scatter_ring --topology v5e-2x2 --axis x --bytes 1M --timing-only";
  const auto d = JsonOf(base);
  const auto s = JsonOf(base + " --chunk-bytes 4K");
  const auto o = JsonOf(base + " --chunk-bytes 4K --chunks-in-flight 1");
  ASSERT_TRUE(d.contains("params") && s.contains("params") && o.contains("params"));
  EXPECT_EQ(s["params"]["chunk_bytes"], 4096);
  EXPECT_EQ(s["params"]["chunks_in_flight"], 2);
  EXPECT_EQ(o["params"]["chunks_in_flight"], 1);
  EXPECT_FALSE(d["params"].contains("chunk_bytes"));  // auto: sized from VMEM
  // Many small chunks pay their per-DMA and per-add costs more often; with one chunk in
  // flight the link waits for each add.
  EXPECT_GT(s["sim_time_ns"].get<double>(), d["sim_time_ns"].get<double>());
  EXPECT_GT(o["sim_time_ns"].get<double>(), s["sim_time_ns"].get<double>());
}

TEST(ParamFlags, TheRingDirectionIsAFlagAndTheDataStaysRight) {
  const auto j = JsonOf("run all_gather_ring --topology v5e-4x4 --bytes 64K --direction left");
  EXPECT_EQ(j["params"]["direction"], "left");
  EXPECT_EQ(j["correct"], true);
}

struct BadParam {
  std::string args;
  std::vector<std::string> messages;
  std::string hint = "--help";
};

void PrintTo(const BadParam& b, std::ostream* os) {
  *os << "tpusim " << b.args;
}

class ParamFlagErrors : public ::testing::TestWithParam<BadParam> {};

// One line naming the parameter (as a flag) and what it allows, a hint, exit code 2.
TEST_P(ParamFlagErrors, NameTheFlagAndWhatItAllows) {
  const auto r = RunTpusim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  for (const auto& message : GetParam().messages)
    EXPECT_THAT(r.err, HasSubstr(message));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // the reason, the hint
  EXPECT_THAT(r.err, HasSubstr(GetParam().hint));
}

INSTANTIATE_TEST_SUITE_P(
    Run, ParamFlagErrors,
    ::testing::Values(
        // Parameters the kernel does not take: named, with those it does.
        BadParam{"run all_gather_ring --bytes 1M --m 3 --bm 7 --precision HIGHEST",
                 {"tpusim run: all_gather_ring takes no --bm, --m, --precision; it takes --axis, "
                  "--bytes, --dtype, --direction."}},
        // A wrong type.
        BadParam{"run reduce_scatter_ring --topology v5e-2x2 --bytes 64K --chunk-bytes lots",
                 {"reduce_scatter_ring: parameter 'chunk_bytes' is 'lots', not a size in bytes",
                  "(flag --chunk-bytes)"},
                 "Try 'tpusim run reduce_scatter_ring --help'."},
        BadParam{"run matmul --topology v5e-2x2 --m 256 --k 256 --n 2.5e2",
                 {"matmul: parameter 'n' is '2.5e2', not a whole number", "(flag --n)"}},
        // Out of range, and not among the allowed values.
        BadParam{"run reduce_scatter_ring --topology v5e-2x2 --bytes 64K --chunks-in-flight 0",
                 {"parameter 'chunks_in_flight' is 0, out of its range: allowed 1 to 16",
                  "(flag --chunks-in-flight)"}},
        // A chunk that cannot hold one element (chunk_bytes is otherwise rounded down to
        // whole elements).
        BadParam{"run reduce_scatter_ring --topology v5e-2x2 --bytes 64K --chunk-bytes 1",
                 {"reduce_scatter_ring: chunk_bytes 1 is less than one bf16 element (2 bytes), "
                  "and a chunk holds whole elements; use a chunk_bytes of at least 2.",
                  "(flag --chunk-bytes)"}},
        BadParam{"run all_reduce_psum --topology v5e-2x2 --bytes 64K --dtype f32 --chunk-bytes 3",
                 {"all_reduce_psum: chunk_bytes 3 is less than one f32 element (4 bytes)",
                  "(flag --chunk-bytes)"}},
        BadParam{"run all_gather_ring --topology v5e-2x2 --bytes 64K --direction up",
                 {"parameter 'direction' is 'up', not one of right, left", "(flag --direction)"}},
        BadParam{"run reduce_scatter_ring --topology v5e-2x2 --bytes 64K --dtype int8",
                 {"not one of bf16, f32, int32", "int8, whose partial sums would overflow"}},
        // Missing, and a value the kernel refuses once it sees the mesh.
        BadParam{"run matmul --topology v5e-2x2 --m 256",
                 {"matmul needs parameters 'k' (int, elements: the contracting dim), 'n'",
                  "(flags --k, --n)"}},
        BadParam{"run matmul --topology v5e-2x2 --m 256 --k 256 --n 256 --bm 512",
                 {"bm 512 must be between 1 and m (256).", "(flag --bm)"}},
        // compare: a flag one entry does not take names that entry.
        BadParam{"compare all_gather_ring all_gather_bidi --topology v5e-2x2 --bytes 64K "
                 "--direction left",
                 {"all_gather_bidi takes no --direction. Leave a flag unset unless every entry "
                  "takes it."}},
        BadParam{
            "compare all_gather_ring all_gather_bidi --topology v5e-2x2 --bytes 64K --m 8",
            {"none of the 2 entries takes --m. Leave a flag unset unless every entry takes it."}},
        // bench: the swept parameter must be an int or bytes parameter of every entry.
        BadParam{"bench all_gather_ring --topology v5e-2x2 --sweep chunk_bytes=4K:8K",
                 {"--sweep cannot sweep 'chunk_bytes': all_gather_ring takes no parameter "
                  "'chunk_bytes'"}},
        BadParam{"bench reduce_scatter_ring --topology v5e-2x2 --bytes 64K --sweep "
                 "chunk_bytes=4K:8K --chunks-in-flight 17",
                 {"out of its range: allowed 1 to 16", "(flag --chunks-in-flight)"}}));

TEST(ParamFlags, CompareTakesAFlagEveryEntryDeclaresAndHelpShowsWhoTakesWhat) {
  const auto rows = JsonOf(
      "compare reduce_scatter_ring reduce_scatter_bidi --topology v5e-2x2 --bytes 64K "
      "--chunk-bytes 8K --timing-only");
  EXPECT_EQ(rows.size(), 2u);
  for (const auto& row : rows)
    EXPECT_EQ(row["params"]["chunk_bytes"], 8192) << row.dump();
  const std::string help = Flat(RunTpusim("compare all_gather_ring all_gather_bidi --help").out);
  EXPECT_THAT(help, HasSubstr("parameters of all_gather_ring, all_gather_bidi"));
  EXPECT_THAT(help, HasSubstr("(at axis index + 1, or - 1) (only all_gather_ring)"));
}

TEST(ParamFlags, BenchSweepsAKernelsOwnParameter) {
  // 8K, 16K, 32K: each row runs with its own chunk size, the rest as given.
  const auto rows = JsonOf(
      "bench reduce_scatter_ring --topology v5e-2x2 --bytes 256K --sweep chunk_bytes=8K:32K "
      "--timing-only");
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["params"]["chunk_bytes"], 8192u << i);
    EXPECT_EQ(rows[i]["bytes"], 262144);
  }
}

// A plugin's kernel declares its own parameter, and the CLI makes it a flag through --load.
TEST(ParamFlags, APluginsOwnParameterIsAFlag) {
  const std::string help =
      Flat(RunTpusim("run all_gather_ring_left_chunked --load " + kPlugin + " --help").out);
  EXPECT_THAT(help, HasSubstr("--chunks N DMAs each ring step's shard is cut into, all in flight "
                              "at once [int, DMAs; default 2; 1 to 64]"));
  const auto j = JsonOf("run all_gather_ring_left_chunked --load " + kPlugin +
                        " --topology v5e-2x2 --bytes 64K --chunks 5");
  EXPECT_EQ(j["params"]["chunks"], 5);
  EXPECT_EQ(j["correct"], true);
  const auto bad = RunTpusim("run all_gather_ring_left_chunked --load " + kPlugin +
                             " --topology v5e-2x2 --bytes 64K --chunks 0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("parameter 'chunks' is 0, out of its range: allowed 1 to 64"));
  EXPECT_THAT(bad.err, HasSubstr("(flag --chunks)"));
}

}  // namespace
}  // namespace tpusim
