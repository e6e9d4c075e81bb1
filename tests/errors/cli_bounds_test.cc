// Bad input on the command line: each case of issue 14's list ends in one clear message
// and a non-zero exit, never a raw library error, a wrapped number or std::bad_alloc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunTpusim;

struct BadCommand {
  std::string args;
  int exit_code;
  std::string message;
};

void PrintTo(const BadCommand& c, std::ostream* os) {
  *os << "tpusim " << c.args;
}

class CliBounds : public ::testing::TestWithParam<BadCommand> {};

TEST_P(CliBounds, FailsWithAClearMessage) {
  const auto r = RunTpusim(GetParam().args);
  EXPECT_EQ(r.exit_code, GetParam().exit_code) << r.out << r.err;
  const std::string output = r.out + r.err;  // check-trace reports problems on stdout
  EXPECT_THAT(output, HasSubstr(GetParam().message));
  EXPECT_THAT(output, Not(HasSubstr("bad_alloc")));
  EXPECT_THAT(output, Not(HasSubstr("filesystem error")));
}

INSTANTIATE_TEST_SUITE_P(
    IssueList, CliBounds,
    ::testing::Values(
        BadCommand{"run all_gather_ring --topology v5e-2x2 --bytes 64K --time-limit 1e30", 2,
                   "--time-limit 1e+30 is out of range"},
        BadCommand{"run all_gather_ring --topology v5e-2x2 --bytes 64K --time-limit inf", 2,
                   "--time-limit inf is out of range"},
        BadCommand{"bench all_gather_ring --topology v5e-2x2 --min-bytes 64K --max-bytes 64K "
                   "--time-limit 3e7",
                   2, "at most 1e+06"},
        BadCommand{"run all_gather_ring --topology v5e-2x2 --bytes 99999999999G", 2,
                   "more bytes than a 64-bit count holds"},
        BadCommand{"run all_gather_ring --topology v5e-2x2", 2,
                   "all_gather_ring needs parameter 'bytes' (bytes: V, the size of the full "
                   "(gathered) array"},
        BadCommand{"run all_gather_ring --topology v5e-2x2 --m 256", 2,
                   "all_gather_ring takes no --m"},
        BadCommand{"run all_gather_ring --topology /dev/zero --bytes 64K", 2,
                   "/dev/zero is not a regular file"},
        BadCommand{"run all_gather_ring --topology /tmp --bytes 64K", 2,
                   "topology /tmp is a directory"},
        BadCommand{"check-trace /tmp", 1, "it is a directory"},
        BadCommand{"check-trace /dev/null", 1, "it is not a regular file"},
        BadCommand{"check-trace /dev/zero", 1, "it is not a regular file"},
        BadCommand{"check-trace /dev/urandom", 1, "it is not a regular file"},
        // Functional: the operands alone would need terabytes of host memory.
        BadCommand{"run matmul --topology v5e-2x2 --m 1048576 --k 1048576 --n 1048576", 1,
                   "of host memory, but only"},
        // The library says to run it timing-only; the CLI names its flag.
        BadCommand{"run matmul --topology v5e-2x2 --m 1048576 --k 1048576 --n 1048576", 1,
                   "run it timing-only (no payload, the same timing) or choose a smaller size. "
                   "(flag --timing-only)"},
        // Refused from the shapes, before the inputs and the host reference are built
        // (that took minutes and gigabytes): the estimate, its parts and the fix.
        BadCommand{"run matmul --topology v5e-16x16 --m 16384 --k 16384 --n 16384", 1,
                   "a functional run of matmul on 256 chips (its inputs and host reference: "},
        BadCommand{"run matmul --topology v5e-16x16 --m 16384 --k 16384 --n 16384", 1,
                   "every chip's input and output blocks: "},
        BadCommand{"run all_gather_ring --topology v5e-16x16 --bytes 4G", 1,
                   "a functional run of all_gather_ring on 256 chips"},
        BadCommand{"run all_gather_ring --topology v5e-16x16 --bytes 4G", 1,
                   "or choose a smaller size. (flag --timing-only)"},
        // compare and bench check every entry, and bench every size, before running one.
        BadCommand{"compare all_gather_ring all_gather_bidi --topology v5e-16x16 --bytes 4G", 1,
                   "a functional run of all_gather_ring on 256 chips"},
        BadCommand{"bench all_gather_ring --topology v5e-16x16 --min-bytes 1K --max-bytes 4G", 1,
                   "at bytes 67108864, a functional run of all_gather_ring on 256 chips"},
        // BlockSpecs are checked before anything slow (the roofline once walked 4096^3 steps).
        BadCommand{"run matmul --topology v5e-2x2 --m 4096 --k 4096 --n 4096 --bm 1 --bk 1 "
                   "--bn 1 --timing-only",
                   2, "BlockSpec for input 0 ('a') has block (1, 1), but the last two dims must"},
        // Timing-only: no payload, but the operands do not fit the chip's HBM.
        BadCommand{"run matmul --topology v5e-2x2 --m 1048576 --k 1048576 --n 1048576 "
                   "--timing-only",
                   1, "HBM"}));

TEST(CliBounds, CollectiveGivenMButNoBytesDoesNotClaimZeroBytesWereGiven) {
  const auto r = RunTpusim("run all_gather_ring --topology v5e-2x2 --m 256");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, Not(HasSubstr("--bytes 0")));
}

TEST(CliBounds, CheckTraceFailsOnAnEmptyFileAndSaysWhy) {
  const std::string path = testing::TempPath("empty.pftrace");
  std::ofstream{path};
  const auto r = RunTpusim("check-trace " + path);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("the file is empty, so it holds no trace packets"));
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
}

TEST(CliBounds, CheckTraceRefusesAFileOverItsReadLimit) {
  // Sparse: 3 GiB on paper, nothing on disk, so the test costs nothing.
  const std::string path = testing::TempPath("huge.pftrace");
  std::ofstream{path};
  std::filesystem::resize_file(path, uint64_t{3} << 30);
  const auto r = RunTpusim("check-trace " + path);
  std::filesystem::remove(path);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("it has 3221225472 bytes, more than the checker reads "
                               "(2147483648 bytes, 2 GiB)"));
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  EXPECT_THAT(RunTpusim("check-trace --help").out,
              HasSubstr("up to 2 GiB (larger files are refused)"));
}

TEST(CliBounds, CheckTraceFailsOnAFileWithoutPackets) {
  const std::string path = testing::TempPath("zeros.pftrace");
  std::ofstream(path) << std::string(4096, '\0');
  const auto r = RunTpusim("check-trace " + path);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
  EXPECT_THAT(r.out, Not(HasSubstr("OK")));
}

TEST(CliBounds, CompareTraceDirOntoAFileIsRefusedByName) {
  const std::string file = testing::TempPath("not-a-dir");
  std::ofstream(file) << "x";
  const auto r = RunTpusim(
      "compare all_gather_ring all_gather_bidi --topology v5e-2x2 "
      "--bytes 64K --trace-dir " +
      file);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--trace-dir '" + file + "' exists and is not a directory"));
  EXPECT_THAT(r.err, Not(HasSubstr("filesystem error")));
}

TEST(CliBounds, AbsurdTopologyFieldsAreRefusedBeforeTheyRunAway) {
  const std::string base = topologies::PresetText("v5e-2x2");
  for (const auto& [from, to, field] :
       {std::tuple<std::string, std::string, std::string>{"engines: 8", "engines: 4294967295",
                                                          "chip.dma.engines"},
        {"chunk_bytes: 524288", "chunk_bytes: 1", "chip.dma.chunk_bytes"},
        {"shape: [2, 2]", "shape: [4, 1000000]", "mesh.shape[1]"},
        {"shape: [2, 2]", "shape: [65536, 65536]", "mesh.shape[0]"}}) {
    std::string text = base;
    text.replace(text.find(from), from.size(), to);
    const std::string path = testing::TempPath(field + ".textproto");
    std::ofstream(path) << text;
    const auto r = RunTpusim("run all_gather_ring --topology " + path + " --bytes 64K");
    EXPECT_EQ(r.exit_code, 2) << to;
    EXPECT_THAT(r.err, HasSubstr("field '" + field + "'")) << to;
    EXPECT_THAT(r.err, HasSubstr("outside its range")) << to;
  }
}

}  // namespace
}  // namespace tpusim
