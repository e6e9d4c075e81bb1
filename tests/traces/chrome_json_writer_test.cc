#include "traces/chrome_json_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/traces/sample_trace.h"

namespace tpusim::traces {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using Json = nlohmann::json;

std::string WriteSample() {
  std::ostringstream out;
  ChromeJsonWriter writer(out);
  testing::RecordSampleRun(writer);
  return out.str();
}

// Every event whose "ph" is `phase` and, when given, whose "name" is `name`.
std::vector<Json> EventsOf(const Json& trace, const std::string& phase,
                           const std::string& name = "") {
  std::vector<Json> found;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") == phase && (name.empty() || event.value("name", "") == name)) {
      found.push_back(event);
    }
  }
  return found;
}

// The tid a "thread_name" metadata event gives to `thread_name`, or -1.
int64_t ThreadIdNamed(const Json& trace, const std::string& thread_name) {
  for (const Json& event : EventsOf(trace, "M", "thread_name")) {
    if (event.at("args").at("name") == thread_name) return event.at("tid").get<int64_t>();
  }
  return -1;
}

TEST(ChromeJsonWriterTest, SampleRunIsValidJson) {
  const Json trace = Json::parse(WriteSample());
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  EXPECT_THAT(EventsOf(trace, "B"), SizeIs(4));
  EXPECT_THAT(EventsOf(trace, "E"), SizeIs(4));
  EXPECT_THAT(EventsOf(trace, "i"), SizeIs(2));
  EXPECT_THAT(EventsOf(trace, "C"), SizeIs(3));
}

TEST(ChromeJsonWriterTest, MapsTracksToProcessesAndThreads) {
  const Json trace = Json::parse(WriteSample());
  const std::vector<Json> processes = EventsOf(trace, "M", "process_name");
  ASSERT_THAT(processes, SizeIs(2));
  EXPECT_EQ(processes[0].at("args").at("name"), "chip 0");
  EXPECT_EQ(processes[1].at("args").at("name"), "chip 1");
  const int64_t chip0_pid = processes[0].at("pid").get<int64_t>();
  const int64_t chip1_pid = processes[1].at("pid").get<int64_t>();
  EXPECT_NE(chip0_pid, chip1_pid);

  const std::vector<Json> sort_indices = EventsOf(trace, "M", "process_sort_index");
  ASSERT_THAT(sort_indices, SizeIs(2));
  EXPECT_EQ(sort_indices[1].at("args").at("sort_index"), 1);

  // A grandchild track is a thread named by its path below the process.
  EXPECT_GT(ThreadIdNamed(trace, "dma 0/queue"), 0);
  const int64_t dma_tid = ThreadIdNamed(trace, "dma 0");
  ASSERT_GT(dma_tid, 0);

  const std::vector<Json> copy = EventsOf(trace, "B", "remote copy");
  ASSERT_THAT(copy, SizeIs(1));
  EXPECT_EQ(copy[0].at("pid"), chip0_pid);
  EXPECT_EQ(copy[0].at("tid"), dma_tid);
  EXPECT_EQ(copy[0].at("args").at("bytes"), 4096);
  EXPECT_EQ(copy[0].at("args").at("dst"), "chip 1");

  // "core 0" exists on both chips; each is its own thread.
  std::vector<int64_t> core_tids;
  for (const Json& event : EventsOf(trace, "M", "thread_name")) {
    if (event.at("args").at("name") == "core 0") core_tids.push_back(event.at("tid"));
  }
  ASSERT_THAT(core_tids, SizeIs(2));
  EXPECT_NE(core_tids[0], core_tids[1]);

  const std::vector<Json> semaphore = EventsOf(trace, "C", "semaphore recv");
  ASSERT_THAT(semaphore, SizeIs(1));
  EXPECT_EQ(semaphore[0].at("pid"), chip1_pid);
  EXPECT_EQ(semaphore[0].at("args").at("value"), 1);
}

TEST(ChromeJsonWriterTest, DrawsFlowsBetweenSlices) {
  const Json trace = Json::parse(WriteSample());
  const std::vector<Json> starts = EventsOf(trace, "s");
  const std::vector<Json> finishes = EventsOf(trace, "f");
  ASSERT_THAT(starts, SizeIs(1));
  ASSERT_THAT(finishes, SizeIs(1));
  EXPECT_EQ(starts[0].at("id"), 1);
  EXPECT_EQ(finishes[0].at("id"), 1);
  EXPECT_EQ(starts[0].at("cat"), finishes[0].at("cat"));
  EXPECT_EQ(finishes[0].at("bp"), "e");
  EXPECT_EQ(starts[0].at("tid"), ThreadIdNamed(trace, "dma 0"));
  EXPECT_EQ(finishes[0].at("ts"), 0.01);  // 10000 ps
}

TEST(ChromeJsonWriterTest, WritesExactMicroseconds) {
  std::ostringstream out;
  {
    ChromeJsonWriter writer(out);
    const TrackId chip = writer.AddProcessTrack("chip", 0);
    writer.Begin(chip, 1'234'567, "a");
    writer.End(chip, 5'000'000);
    writer.Instant(chip, 1, "b");
  }
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("\"ts\":1.234567,"));
  EXPECT_THAT(text, HasSubstr("\"ts\":5,"));
  EXPECT_THAT(text, HasSubstr("\"ts\":0.000001,"));
  // The destructor finished the document.
  EXPECT_TRUE(Json::accept(text));
}

TEST(ChromeJsonWriterTest, EscapesNamesAndNonFiniteValues) {
  std::ostringstream out;
  ChromeJsonWriter writer(out);
  const std::string awkward = "say \"hi\"\\\n\ttab\x01";
  const TrackId chip = writer.AddProcessTrack(awkward, 0);
  const TrackId counter = writer.AddCounterTrack(chip, "ratio", CounterUnit::kCount, 0);
  writer.Instant(chip, 0, awkward, {{awkward, awkward}});
  writer.Counter(counter, 0, 1.0 / 0.0);
  writer.Counter(counter, 1, 0.1);
  writer.Finish();

  const Json trace = Json::parse(out.str());
  const std::vector<Json> instants = EventsOf(trace, "i");
  ASSERT_THAT(instants, SizeIs(1));
  EXPECT_EQ(instants[0].at("name"), awkward);
  EXPECT_EQ(instants[0].at("args").at(awkward), awkward);
  const std::vector<Json> counters = EventsOf(trace, "C");
  ASSERT_THAT(counters, SizeIs(2));
  EXPECT_EQ(counters[0].at("args").at("value"), "Infinity");
  EXPECT_EQ(counters[1].at("args").at("value"), 0.1);
}

TEST(ChromeJsonWriterTest, EmptyTraceIsValidJson) {
  std::ostringstream out;
  ChromeJsonWriter writer(out);
  writer.Finish();
  const Json trace = Json::parse(out.str());
  EXPECT_TRUE(trace.at("traceEvents").empty());
}

TEST(ChromeJsonWriterTest, SameCallsGiveIdenticalText) {
  EXPECT_EQ(WriteSample(), WriteSample());
}

TEST(ChromeJsonWriterTest, RejectsMisusedTracksAndCallsAfterFinish) {
  std::ostringstream out;
  ChromeJsonWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip 0", 0);
  const TrackId counter = writer.AddCounterTrack(chip, "hbm", CounterUnit::kBytes, 0);
  EXPECT_THROW(writer.Begin(counter, 0, "oops"), TraceError);
  EXPECT_THROW(writer.Counter(chip, 0, 1), TraceError);
  EXPECT_THROW(writer.End(99, 0), TraceError);
  writer.Finish();
  EXPECT_THROW(writer.Begin(chip, 0, "late"), TraceError);
  EXPECT_TRUE(Json::accept(out.str()));
}

}  // namespace
}  // namespace tpusim::traces
