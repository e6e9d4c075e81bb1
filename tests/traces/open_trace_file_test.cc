#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/traces/sample_trace.h"
#include "traces/trace_checker.h"
#include "traces/trace_sink.h"

namespace tpusim::traces {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

TEST(TraceFormatForPathTest, JsonSuffixPicksChromeJson) {
  EXPECT_EQ(TraceFormatForPath("run.json"), TraceFormat::kChromeJson);
  EXPECT_EQ(TraceFormatForPath("out/run.JSON"), TraceFormat::kChromeJson);
  EXPECT_EQ(TraceFormatForPath("run.pftrace"), TraceFormat::kPerfetto);
  EXPECT_EQ(TraceFormatForPath("run.json.pftrace"), TraceFormat::kPerfetto);
  EXPECT_EQ(TraceFormatForPath("json"), TraceFormat::kPerfetto);
  EXPECT_EQ(TraceFormatForPath(""), TraceFormat::kPerfetto);
}

TEST(OpenTraceFileTest, WritesAPerfettoFileThatPassesTheChecker) {
  const std::string path = TempPath("open_trace_file_test.pftrace");
  {
    std::unique_ptr<TraceSink> sink = OpenTraceFile(path);
    testing::RecordSampleRun(*sink);
  }
  const TraceCheckResult result = CheckPerfettoTraceFile(path);
  EXPECT_TRUE(result.ok()) << result.ProblemsText();
  EXPECT_EQ(result.summary.slices, 4u);
  std::remove(path.c_str());
}

TEST(OpenTraceFileTest, WritesChromeJsonForJsonPaths) {
  const std::string path = TempPath("open_trace_file_test.json");
  {
    std::unique_ptr<TraceSink> sink = OpenTraceFile(path);
    testing::RecordSampleRun(*sink);
  }
  const std::string text = ReadTraceFile(path);
  EXPECT_THAT(text, StartsWith("{\"traceEvents\":["));
  EXPECT_THAT(text, HasSubstr("\"name\":\"remote copy\""));
  std::remove(path.c_str());
}

TEST(OpenTraceFileTest, FormatArgumentOverridesTheSuffix) {
  const std::string path = TempPath("open_trace_file_test_forced.json");
  {
    std::unique_ptr<TraceSink> sink = OpenTraceFile(path, TraceFormat::kPerfetto);
    testing::RecordSampleRun(*sink);
  }
  EXPECT_TRUE(CheckPerfettoTraceFile(path).ok());
  std::remove(path.c_str());
}

TEST(OpenTraceFileTest, UnwritablePathNamesThePathTheReasonAndTheFix) {
  const std::string path = TempPath("no such directory/run.pftrace");
  try {
    OpenTraceFile(path);
    FAIL() << "opening " << path << " should throw";
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), AllOf(HasSubstr(path), HasSubstr("No such file or directory"),
                                    HasSubstr("check the directory exists and is writable")));
  }
  EXPECT_THROW(OpenTraceFile(TempPath("missing/run.json")), TraceError);
}

TEST(OpenTraceFileTest, FailedWritesAreReportedByFinish) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full to fill";
  std::unique_ptr<TraceSink> sink = OpenTraceFile("/dev/full");
  const TrackId chip = sink->AddProcessTrack("chip", 0);
  // More than the file buffer, so the failure happens before Finish too.
  for (int i = 0; i < 200'000; ++i)
    sink->Instant(chip, uint64_t(i), "tick");
  try {
    sink->Finish();
    FAIL() << "Finish should report that writing to /dev/full failed";
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), AllOf(HasSubstr("/dev/full"), HasSubstr("No space left")));
  }
}

}  // namespace
}  // namespace tpusim::traces
