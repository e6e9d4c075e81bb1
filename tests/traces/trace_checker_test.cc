#include "traces/trace_checker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "traces/perfetto_trace.pb.h"
#include "traces/perfetto_writer.h"

namespace tpusim::traces {
namespace {

using perfetto::protos::Trace;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackEvent;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// Builds traces packet by packet, so tests can break rules the writer never would.
class HandBuiltTrace {
 public:
  TracePacket& Packet() {
    TracePacket& packet = *trace_.add_packet();
    packet.set_trusted_packet_sequence_id(1);
    return packet;
  }
  void Track(uint64_t uuid, const std::string& name, uint64_t parent_uuid = 0,
             bool counter = false) {
    auto& descriptor = *Packet().mutable_track_descriptor();
    descriptor.set_uuid(uuid);
    descriptor.set_name(name);
    if (parent_uuid != 0) descriptor.set_parent_uuid(parent_uuid);
    if (counter) descriptor.mutable_counter();
  }
  TrackEvent& Event(uint64_t ts_ns, uint64_t track_uuid, TrackEvent::Type type,
                    const std::string& name = "") {
    TracePacket& packet = Packet();
    packet.set_timestamp(ts_ns);
    TrackEvent& event = *packet.mutable_track_event();
    event.set_type(type);
    event.set_track_uuid(track_uuid);
    if (!name.empty()) event.set_name(name);
    return event;
  }
  std::string Bytes() const { return trace_.SerializeAsString(); }

 private:
  Trace trace_;
};

// Writes through the real writer, for rule breaks the interface allows.
struct WrittenTrace {
  std::ostringstream out;
  PerfettoWriter writer{out};
  TrackId chip = writer.AddProcessTrack("chip 0", 0);
  TrackId core = writer.AddTrack(chip, "core 0", 0);
  TrackId dma = writer.AddTrack(chip, "dma 0", 1);

  TraceCheckResult Check() {
    writer.Finish();
    return CheckPerfettoTrace(out.str());
  }
};

TEST(TraceCheckerTest, AcceptsEndAndBeginAtTheSameTimestamp) {
  WrittenTrace t;
  t.writer.Begin(t.core, 0, "a");
  t.writer.End(t.core, 5000);
  t.writer.Begin(t.core, 5000, "b");
  t.writer.Begin(t.core, 5000, "b.inner");
  t.writer.End(t.core, 5000);
  t.writer.End(t.core, 7000);
  const TraceCheckResult result = t.Check();
  EXPECT_TRUE(result.ok()) << result.ProblemsText();
  EXPECT_EQ(result.summary.slices, 3u);
}

TEST(TraceCheckerTest, DetectsOverlappingSlicesOnOneTrack) {
  WrittenTrace t;
  t.writer.Begin(t.core, 10'000, "outer");
  t.writer.Begin(t.core, 20'000, "inner");
  t.writer.End(t.core, 30'000);
  t.writer.End(t.core, 25'000);  // "outer" would end before "inner" did
  const TraceCheckResult result = t.Check();
  EXPECT_THAT(result.problems, Contains(AllOf(HasSubstr("\"chip 0/core 0\""), HasSubstr("25 ns"),
                                              HasSubstr("timestamp order"))));
}

TEST(TraceCheckerTest, DetectsEndWithoutBegin) {
  WrittenTrace t;
  t.writer.Begin(t.core, 0, "only");
  t.writer.End(t.core, 1000);
  t.writer.End(t.core, 2000);
  const TraceCheckResult result = t.Check();
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("\"chip 0/core 0\""), HasSubstr("2 ns"),
                                        HasSubstr("no matching BEGIN")));
}

TEST(TraceCheckerTest, DetectsSliceNeverEnded) {
  WrittenTrace t;
  t.writer.Begin(t.dma, 3000, "copy");
  const TraceCheckResult result = t.Check();
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("\"chip 0/dma 0\""), HasSubstr("\"copy\""),
                                        HasSubstr("3 ns"), HasSubstr("never ended")));
}

TEST(TraceCheckerTest, DetectsUnterminatedFlow) {
  WrittenTrace t;
  t.writer.Begin(t.dma, 4000, "send", {}, /*flow_out=*/7);
  t.writer.End(t.dma, 5000);
  const TraceCheckResult result = t.Check();
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("Flow 7"), HasSubstr("\"chip 0/dma 0\""),
                                        HasSubstr("4 ns"), HasSubstr("never terminated")));
  EXPECT_EQ(result.summary.flows, 1u);
}

TEST(TraceCheckerTest, DetectsFlowTerminatedTwiceOrNeverStarted) {
  WrittenTrace t;
  t.writer.Instant(t.dma, 0, "send", {}, /*flow_out=*/3);
  t.writer.Instant(t.core, 1000, "receive", {}, 0, /*flow_in=*/3);
  t.writer.Instant(t.core, 2000, "receive again", {}, 0, /*flow_in=*/3);
  t.writer.Instant(t.core, 3000, "receive unknown", {}, 0, /*flow_in=*/9);
  const TraceCheckResult result = t.Check();
  ASSERT_THAT(result.problems, SizeIs(2));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("flow 3"), HasSubstr("2 ns")));
  EXPECT_THAT(result.problems[1], AllOf(HasSubstr("flow 9"), HasSubstr("never started")));
}

TEST(TraceCheckerTest, ContinuingAFlowIsNotANewFlow) {
  WrittenTrace t;
  t.writer.Instant(t.dma, 0, "hop 1", {}, /*flow_out=*/5);
  t.writer.Instant(t.core, 1000, "hop 2", {}, /*flow_out=*/5);
  t.writer.Instant(t.core, 2000, "arrive", {}, 0, /*flow_in=*/5);
  const TraceCheckResult result = t.Check();
  EXPECT_TRUE(result.ok()) << result.ProblemsText();
  EXPECT_EQ(result.summary.flows, 1u);
}

TEST(TraceCheckerTest, DetectsEventBeforeItsTrackDescriptor) {
  HandBuiltTrace trace;
  trace.Packet().set_sequence_flags(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  trace.Event(100, 5, TrackEvent::TYPE_INSTANT, "early");
  trace.Track(5, "late track");
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("uuid 5"), HasSubstr("100 ns"),
                                        HasSubstr("\"early\""), HasSubstr("no descriptor")));
}

TEST(TraceCheckerTest, DetectsParentDescribedAfterItsChild) {
  HandBuiltTrace trace;
  trace.Track(2, "child", /*parent_uuid=*/1);
  trace.Track(1, "parent");
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("\"child\""), HasSubstr("parent uuid 1")));
}

TEST(TraceCheckerTest, DetectsSameUuidForTwoTracks) {
  HandBuiltTrace trace;
  trace.Track(1, "chip 0");
  trace.Track(1, "chip 0");  // re-describing the same track is fine
  trace.Track(1, "chip 1");
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("\"chip 0\""), HasSubstr("\"chip 1\"")));
}

TEST(TraceCheckerTest, DetectsCountersAndSlicesOnTheWrongTracks) {
  HandBuiltTrace trace;
  trace.Track(1, "chip");
  trace.Track(2, "core", 1);
  trace.Track(3, "hbm", 1, /*counter=*/true);
  trace.Event(10, 2, TrackEvent::TYPE_COUNTER).set_counter_value(1);
  trace.Event(20, 3, TrackEvent::TYPE_SLICE_BEGIN, "load");
  trace.Event(30, 3, TrackEvent::TYPE_SLICE_END);
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(3));
  EXPECT_THAT(result.problems[0], AllOf(HasSubstr("\"chip/core\""), HasSubstr("10 ns"),
                                        HasSubstr("without a CounterDescriptor")));
  EXPECT_THAT(result.problems[1], AllOf(HasSubstr("\"chip/hbm\""), HasSubstr("\"load\""),
                                        HasSubstr("20 ns"), HasSubstr("counter track")));
  EXPECT_THAT(result.problems[2], AllOf(HasSubstr("\"chip/hbm\""), HasSubstr("30 ns")));
}

TEST(TraceCheckerTest, DetectsMissingSequenceId) {
  HandBuiltTrace trace;
  trace.Track(1, "chip");
  trace.Packet().clear_trusted_packet_sequence_id();
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0],
              AllOf(HasSubstr("Packet 2"), HasSubstr("trusted_packet_sequence_id")));
}

// An instant on track 1 named by `iid`, defining the iid in the same packet when
// `defined_name` is non-empty.
void AddInternedInstant(HandBuiltTrace& trace, uint64_t ts_ns, uint32_t flags, uint64_t iid,
                        const std::string& defined_name) {
  TracePacket& packet = trace.Packet();
  packet.set_sequence_flags(flags);
  packet.set_timestamp(ts_ns);
  if (!defined_name.empty()) {
    auto& name = *packet.mutable_interned_data()->add_event_names();
    name.set_iid(iid);
    name.set_name(defined_name);
  }
  packet.mutable_track_event()->set_type(TrackEvent::TYPE_INSTANT);
  packet.mutable_track_event()->set_track_uuid(1);
  packet.mutable_track_event()->set_name_iid(iid);
}

constexpr uint32_t kCleared = TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
constexpr uint32_t kNeedsState = TracePacket::SEQ_NEEDS_INCREMENTAL_STATE;

TEST(TraceCheckerTest, AcceptsNameInternedInTheSamePacket) {
  HandBuiltTrace trace;
  trace.Track(1, "chip");
  AddInternedInstant(trace, 10, kCleared | kNeedsState, 4, "tick");
  AddInternedInstant(trace, 20, kNeedsState, 4, "");
  const std::string bytes = trace.Bytes();
  const TraceCheckResult result = CheckPerfettoTrace(bytes);
  EXPECT_TRUE(result.ok()) << result.ProblemsText();
  const std::vector<DecodedEvent> events = DecodePerfettoTrace(bytes);
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_EQ(events[1].name, "tick");
}

TEST(TraceCheckerTest, DetectsInternedNameUsedBeforeItIsDefined) {
  HandBuiltTrace trace;
  trace.Track(1, "chip");
  AddInternedInstant(trace, 10, kCleared | kNeedsState, 4, "");
  AddInternedInstant(trace, 20, kNeedsState, 4, "tick");
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0],
              AllOf(HasSubstr("10 ns"), HasSubstr("name iid 4"), HasSubstr("no earlier packet")));
}

TEST(TraceCheckerTest, DetectsInterningWithoutClearedState) {
  HandBuiltTrace trace;
  trace.Track(1, "chip");
  AddInternedInstant(trace, 10, kNeedsState, 1, "tick");
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0], HasSubstr("SEQ_INCREMENTAL_STATE_CLEARED"));
}

TEST(TraceCheckerTest, DetectsInternedNameWithoutNeedsIncrementalState) {
  HandBuiltTrace trace;
  trace.Track(1, "chip");
  AddInternedInstant(trace, 10, kCleared, 1, "tick");
  const TraceCheckResult result = CheckPerfettoTrace(trace.Bytes());
  ASSERT_THAT(result.problems, SizeIs(1));
  EXPECT_THAT(result.problems[0],
              AllOf(HasSubstr("10 ns"), HasSubstr("SEQ_NEEDS_INCREMENTAL_STATE")));
}

TEST(TraceCheckerTest, ReportsTruncatedTraceAndDecodeThrows) {
  WrittenTrace t;
  t.writer.Begin(t.core, 0, "work");
  t.writer.End(t.core, 1000);
  t.writer.Finish();
  std::string bytes = t.out.str();
  bytes.resize(bytes.size() - 3);
  const TraceCheckResult result = CheckPerfettoTrace(bytes);
  EXPECT_THAT(result.problems, Contains(HasSubstr("truncated")));
  EXPECT_THROW(DecodePerfettoTrace(bytes), TraceError);
}

TEST(TraceCheckerTest, ListsTheFirstHundredProblemsAndCountsTheRest) {
  WrittenTrace t;
  for (int i = 0; i < 500; ++i)
    t.writer.End(t.core, uint64_t(i) * 1000);
  const TraceCheckResult result = t.Check();
  ASSERT_THAT(result.problems, SizeIs(101));
  EXPECT_THAT(result.problems.back(), HasSubstr("400 further problems"));
}

TEST(TraceCheckerTest, ChecksFilesAndReportsUnreadableOnes) {
  const std::string path = ::testing::TempDir() + "/trace_checker_test.pftrace";
  {
    WrittenTrace t;
    t.writer.Instant(t.core, 0, "hello");
    t.writer.Finish();
    std::ofstream(path, std::ios::binary) << t.out.str();
  }
  const TraceCheckResult good = CheckPerfettoTraceFile(path);
  EXPECT_TRUE(good.ok()) << good.ProblemsText();
  EXPECT_EQ(good.summary.instants, 1u);
  std::remove(path.c_str());

  const TraceCheckResult missing = CheckPerfettoTraceFile(path);
  ASSERT_THAT(missing.problems, SizeIs(1));
  EXPECT_THAT(missing.problems[0],
              AllOf(HasSubstr("cannot read"), HasSubstr(path), HasSubstr("No such file")));
  EXPECT_THROW(ReadTraceFile(path), TraceError);
}

}  // namespace
}  // namespace tpusim::traces
