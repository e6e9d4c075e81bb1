// Where the report goes: a write that fails (a full disk, a closed standard output) fails
// the command with a message on stderr instead of exiting 0 with the report lost, and a
// trace to a FIFO nobody reads is refused instead of blocking forever.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::RunTpusim;

const std::string kRun = "run all_gather_bidi --topology v5e-2x2 --axis x --bytes 64K";

TEST(Output, AReportToAFullDiskFailsTheCommand) {
  for (const std::string& args :
       {kRun + " --json", kRun, std::string("list"), std::string("--version")}) {
    SCOPED_TRACE(args);
    const auto r = RunTpusim(args + " >/dev/full");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    // The reason shows when stdio still knows it (a report flushed early has lost errno).
    EXPECT_THAT(r.err, HasSubstr("could not write to standard output"));
    EXPECT_THAT(r.err, HasSubstr("so the output is incomplete; free space on the disk"));
  }
}

TEST(Output, AClosedStandardOutputIsRefusedBeforeAnythingRuns) {
  const std::string trace = testing::TempPath("closed.pftrace");
  std::remove(trace.c_str());
  const auto r = RunTpusim(kRun + " --trace " + trace + " >&-");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("standard output is closed, and tpusim writes its report there"));
  // The trace file did not take the closed descriptor and the report with it.
  EXPECT_FALSE(std::ifstream(trace).good());
}

TEST(Output, BenchCsvToAFullDiskFailsTheCommand) {
  const auto r = RunTpusim(
      "bench all_gather_bidi --topology v5e-2x2 --min-bytes 64K --max-bytes 64K --csv /dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("could not write the CSV file '/dev/full' (No space left on "
                               "device)"));
}

TEST(Output, ATraceToAFifoThatNothingReadsIsRefused) {
  const std::string fifo = testing::TempPath("unread.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto r = RunTpusim(kRun + " --trace " + fifo);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("it is a FIFO that nothing reads, and writing to it would wait "
                               "forever. Start its reader first"));
  std::remove(fifo.c_str());
}

TEST(Output, ATraceToAFifoWithAReaderIsWritten) {
  const std::string fifo = testing::TempPath("read.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);  // blocks until tpusim opens the FIFO
    std::stringstream bytes;
    bytes << in.rdbuf();
    received = bytes.str();
  });
  // The reader may not have opened the FIFO yet: tpusim is then refused, and retried.
  testing::CommandResult r;
  for (int attempt = 0; attempt < 100; ++attempt) {
    r = RunTpusim(kRun + " --trace " + fifo);
    if (r.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) std::ofstream(fifo).put('\n');  // release the reader
  reader.join();
  EXPECT_GT(received.size(), 1000u);
  std::remove(fifo.c_str());
}

TEST(Output, NoRaceCheckSaysWhatItStillCatches) {
  const auto r = RunTpusim("run --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string help = r.out;
  // Boost wraps the text: compare it with the line breaks and indents folded to spaces.
  std::string folded;
  for (char c : help) {
    if (c == '\n') c = ' ';
    if (c == ' ' && !folded.empty() && folded.back() == ' ') continue;
    folded += c;
  }
  EXPECT_THAT(folded, HasSubstr("two DMAs writing the same bytes at the same time are still "
                                "caught, in every run"));
}

}  // namespace
}  // namespace tpusim
