// tpusim --load: a plugin's kernels join the registry and run like built-in ones; a
// library that cannot be loaded, clashes with a name, or registers nothing is a clear
// error. And tpusim --version.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::RunTpusim;

const std::string kPlugin = TPUSIM_TEST_PLUGIN;  // examples/user_kernel's kernel and program

TEST(Plugin, ListShowsBuiltInAndLoadedKernelsWithSummaries) {
  const auto r = RunTpusim("list --load " + kPlugin);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("all_gather_ring_left_chunked"));
  EXPECT_THAT(r.out, HasSubstr("ring all-gather to the left"));
  EXPECT_THAT(r.out, HasSubstr("gather_sum"));  // the example's program
  EXPECT_THAT(r.out, HasSubstr("all_gather_bidi"));
  EXPECT_THAT(r.out, HasSubstr("unidirectional ring all-gather"));
}

TEST(Plugin, ListWithoutLoadHasOnlyBuiltInKernels) {
  const auto r = RunTpusim("list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("all_gather_ring"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("all_gather_ring_left_chunked")));
}

TEST(Plugin, LoadedKernelRunsAndMatchesTheReference) {
  const auto r = RunTpusim("run all_gather_ring_left_chunked --load " + kPlugin +
                           " --topology v5e-2x4 --axis y --bytes 64K --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("matches the reference on all 8 chips"));
  const auto j = testing::LastLineJson(r.out);
  EXPECT_EQ(j["kernel"], "all_gather_ring_left_chunked");
  EXPECT_EQ(j["correct"], true);
}

TEST(Plugin, CompareTakesLoadAnywhereOnTheLine) {
  const auto r = RunTpusim("--load=" + kPlugin +
                           " compare all_gather_ring all_gather_ring_left_chunked "
                           "--topology v5e-2x2 --axis x --bytes 64K");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("all_gather_ring_left_chunked"));
}

TEST(Plugin, BenchSweepsALoadedKernelInItsChildProcesses) {
  const auto r =
      RunTpusim("bench all_gather_ring_left_chunked --load " + kPlugin +
                " --topology v5e-2x2 --min-bytes 64K --max-bytes 256K --factor 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto rows = testing::LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["kernel"], "all_gather_ring_left_chunked");
    EXPECT_EQ(row["correct"], true);
  }
}

struct BadLoad {
  std::string args;
  std::vector<std::string> messages;
};

void PrintTo(const BadLoad& b, std::ostream* os) {
  *os << "tpusim " << b.args;
}

class PluginErrors : public ::testing::TestWithParam<BadLoad> {};

TEST_P(PluginErrors, EndWithOneClearMessageAndExitTwo) {
  const auto r = RunTpusim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (const auto& message : GetParam().messages)
    EXPECT_THAT(r.err, HasSubstr(message));
}

INSTANTIATE_TEST_SUITE_P(
    Cli, PluginErrors,
    ::testing::Values(
        BadLoad{"list --load /nonexistent/libnope.so",
                {"cannot load kernel library '/nonexistent/libnope.so'",
                 "No such file or directory", "built against tpusim"}},
        BadLoad{"list --load " TPUSIM_SOURCE_DIR "/README.md",
                {"cannot load kernel library", "README.md", "built against tpusim"}},
        BadLoad{
            "run all_gather_ring --topology v5e-2x2 --bytes 64K --load " TPUSIM_DUPLICATE_PLUGIN,
            {"kernel library '" TPUSIM_DUPLICATE_PLUGIN "'",
             "kernel 'all_gather_ring' is registered twice", "rename the later one"}},
        BadLoad{"list --load " TPUSIM_EMPTY_PLUGIN,
                {"registered no kernel", "tpusim::kernels::Registration"}},
        BadLoad{"list --load", {"--load needs the path of a shared library"}},
        BadLoad{"list --load " TPUSIM_THROWING_PLUGIN,
                {"kernel library '" TPUSIM_THROWING_PLUGIN "' threw while it loaded",
                 "the plugin's settings file is missing", "static initialiser"}},
        BadLoad{
            "list --load " TPUSIM_BAD_REGISTRATIONS_PLUGIN,
            {"kernel library '" TPUSIM_BAD_REGISTRATIONS_PLUGIN "'",
             "kernel 'ring_without_make' has no make function (KernelInfo::make is empty)",
             "a kernel has an empty name", "kernel '--help': a name starts with a letter or digit",
             "kernel 'has space': a name starts with a letter or digit"}}));

TEST(Plugin, AKernelWhoseBoundIsNanFailsNamingTheBound) {
  const auto r = RunTpusim("run nan_bound_ring --load " TPUSIM_NAN_BOUND_PLUGIN
                           " --topology v5e-2x2 --bytes 64K --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("kernel 'nan_bound_ring': its bound (KernelInfo::bound) gives "
                               "nan seconds"));
  EXPECT_THAT(r.out + r.err, ::testing::Not(HasSubstr("nan%")));
}

// A second copy of the example's plugin registers its kernel and its program again: the
// message names each with its kind, in one sentence.
TEST(Plugin, ACopyOfAPluginNamesEveryKernelAndProgramItRegistersAgain) {
  const std::string copy = testing::TempPath("libuser_kernel_copy.so");
  std::filesystem::copy_file(kPlugin, copy, std::filesystem::copy_options::overwrite_existing);
  const auto r = RunTpusim("list --load " + kPlugin + " --load " + copy);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("kernel library '" + copy +
                               "': kernel 'all_gather_ring_left_chunked' and program "
                               "'gather_sum' are registered twice; the first registration is "
                               "kept. Every kernel and program needs its own name: rename the "
                               "later one."));
}

// Models and call targets register from static initialisers inside dlopen: a taken name is
// recorded there (base/registry.h) and fails the load, where it used to terminate tpusim.
TEST(Plugin, AModelOrCallTargetWithATakenNameFailsTheLoadNamingEach) {
  const auto r = RunTpusim("list --load " TPUSIM_CLASHING_MODELS_PLUGIN);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("kernel library '" TPUSIM_CLASHING_MODELS_PLUGIN
                               "': timing model 'row_buffer' is registered twice; the first "
                               "registration is kept: rename the later one; compute model "
                               "'roofline' is registered twice"));
  EXPECT_THAT(r.err, HasSubstr("pallas_call target 'matmul' is registered twice"));
  EXPECT_THAT(r.err, HasSubstr("A plugin's names must differ from the library's"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("terminate")));
}

#ifdef TPUSIM_PLUGIN_HOST
// `tpusim` links libtpusim's objects and protobuf's archive (tools/tpusim/CMakeLists.txt says
// why), and hands a run that loads a plugin to the shared-linked CLI, which the tests above
// exercise through it. ld.so lists what each would load, without running it.
TEST(Plugin, TheCliLoadsNeitherLibtpusimNorLibprotobufButItsPluginHostDoes) {
  const auto cli = testing::RunShell("LD_TRACE_LOADED_OBJECTS=1 " TPUSIM_BINARY);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_THAT(cli.out, HasSubstr("libsystemc"));
  EXPECT_THAT(cli.out, ::testing::Not(HasSubstr("libtpusim")));
  EXPECT_THAT(cli.out, ::testing::Not(HasSubstr("libprotobuf")));
  const auto host = testing::RunShell("LD_TRACE_LOADED_OBJECTS=1 " TPUSIM_PLUGIN_HOST);
  ASSERT_EQ(host.exit_code, 0) << host.err;
  EXPECT_THAT(host.out, HasSubstr("libtpusim"));
}

// A `tpusim` copied without its helper runs what needs no plugin, and a --load says which
// file it needed and how to get it.
TEST(Plugin, ACliWithoutItsPluginHostNamesTheMissingFile) {
  const std::string bin = testing::TempPath("cli_alone/bin");
  std::filesystem::create_directories(bin);
  std::filesystem::copy_file(TPUSIM_BINARY, bin + "/tpusim",
                             std::filesystem::copy_options::overwrite_existing);
  const auto alone = testing::RunShell(bin + "/tpusim list");
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_THAT(alone.out, HasSubstr("all_gather_ring"));
  const auto r = testing::RunShell(bin + "/tpusim list --load " + kPlugin);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("tpusim: --load runs plugins in tpusim's shared-library build, "
                               "which should be at " +
                               bin +
                               "/" TPUSIM_PLUGIN_HOST_FROM_CLI
                               ", and it could not be started (No such file or directory); "
                               "install tpusim with `cmake --install`, which installs both."));
}
#endif

TEST(Version, PrintsTheProjectVersionAndGitRevision) {
  const auto r = RunTpusim("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(std::string("tpusim ") + TPUSIM_VERSION + " (git "));
  // A checkout gives a hex revision (maybe "-dirty"); a tarball build says "unknown".
  EXPECT_THAT(r.out, MatchesRegex("tpusim [0-9.]+ \\(git ([0-9a-f]{7,}.*|unknown)\\)\n"));
}

}  // namespace
}  // namespace tpusim
