#include "traces/perfetto_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/traces/sample_trace.h"
#include "traces/perfetto_trace.pb.h"
#include "traces/trace_checker.h"

namespace tpusim::traces {
namespace {

using perfetto::protos::CounterDescriptor;
using perfetto::protos::Trace;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackDescriptor;
using perfetto::protos::TrackEvent;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string WriteSample() {
  std::ostringstream out;
  PerfettoWriter writer(out);
  testing::RecordSampleRun(writer);
  return out.str();
}

Trace ParseTrace(const std::string& bytes) {
  Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  return trace;
}

const DecodedEvent* FindEvent(const std::vector<DecodedEvent>& events, DecodedEvent::Type type,
                              const std::string& track, const std::string& name) {
  auto found = std::find_if(events.begin(), events.end(), [&](const DecodedEvent& event) {
    return event.type == type && event.track == track && event.name == name;
  });
  return found == events.end() ? nullptr : &*found;
}

TEST(PerfettoWriterTest, SampleRunPassesTheChecker) {
  const TraceCheckResult result = CheckPerfettoTrace(WriteSample());
  EXPECT_TRUE(result.ok()) << result.ProblemsText();
  const TraceSummary& summary = result.summary;
  EXPECT_EQ(summary.tracks, 8u);
  EXPECT_EQ(summary.packets, 8u + 13u);
  EXPECT_EQ(summary.slices, 4u);
  EXPECT_EQ(summary.instants, 2u);
  EXPECT_EQ(summary.counter_samples, 3u);
  EXPECT_EQ(summary.flows, 1u);
  EXPECT_EQ(summary.last_timestamp_ns, 20u);
  EXPECT_THAT(summary.track_names, ElementsAre("chip 0", "chip 0/core 0", "chip 0/dma 0",
                                               "chip 0/dma 0/queue", "chip 0/hbm bandwidth",
                                               "chip 1", "chip 1/core 0", "chip 1/semaphore recv"));
  EXPECT_EQ(summary.slices_per_track_name.at("chip 0/core 0"), 3u);
  EXPECT_EQ(summary.slices_per_track_name.at("chip 0/dma 0"), 1u);
}

TEST(PerfettoWriterTest, DecodesBackWhatWasRecorded) {
  const std::vector<DecodedEvent> events = DecodePerfettoTrace(WriteSample());
  ASSERT_EQ(events.size(), 13u);

  const DecodedEvent* copy =
      FindEvent(events, DecodedEvent::Type::kSliceBegin, "chip 0/dma 0", "remote copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->ts_ns, 2u);
  ASSERT_EQ(copy->args.size(), 3u);
  EXPECT_EQ(copy->args[0].name, "bytes");
  EXPECT_EQ(std::get<uint64_t>(copy->args[0].value), 4096u);
  EXPECT_EQ(copy->args[1].name, "dst");
  EXPECT_EQ(std::get<std::string>(copy->args[1].value), "chip 1");
  EXPECT_EQ(std::get<double>(copy->args[2].value), 0.5);
  EXPECT_THAT(copy->flow_ids, ElementsAre(1u));

  const DecodedEvent* arrive =
      FindEvent(events, DecodedEvent::Type::kInstant, "chip 1/core 0", "arrive");
  ASSERT_NE(arrive, nullptr);
  EXPECT_EQ(arrive->ts_ns, 10u);
  EXPECT_THAT(arrive->terminating_flow_ids, ElementsAre(1u));
  EXPECT_TRUE(std::get<bool>(arrive->args.at(0).value));

  const DecodedEvent* kernel =
      FindEvent(events, DecodedEvent::Type::kSliceBegin, "chip 0/core 0", "kernel");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(std::get<int64_t>(kernel->args.at(0).value), 4);

  // The END of the DMA slice names the slice it closes, floored from 9999 ps.
  const DecodedEvent* copy_end =
      FindEvent(events, DecodedEvent::Type::kSliceEnd, "chip 0/dma 0", "remote copy");
  ASSERT_NE(copy_end, nullptr);
  EXPECT_EQ(copy_end->ts_ns, 9u);

  std::vector<double> bandwidth;
  for (const DecodedEvent& event : events) {
    if (event.track == "chip 0/hbm bandwidth") bandwidth.push_back(event.value);
  }
  EXPECT_THAT(bandwidth, ElementsAre(1.5e9, 0.0));
}

TEST(PerfettoWriterTest, PairsSlicesWithTheirDepth) {
  const std::vector<DecodedSlice> slices = PairSlices(DecodePerfettoTrace(WriteSample()));
  ASSERT_EQ(slices.size(), 4u);
  EXPECT_EQ(slices[0].name, "kernel");
  EXPECT_EQ(slices[0].depth, 0);
  EXPECT_EQ(slices[0].begin_ns, 0u);
  EXPECT_EQ(slices[0].end_ns, 20u);
  EXPECT_EQ(slices[1].name, "step 0");
  EXPECT_EQ(slices[1].depth, 1);
  EXPECT_EQ(slices[1].duration_ns(), 11u);  // 1500 ps -> 1 ns, 12000 ps -> 12 ns
  EXPECT_EQ(slices[3].name, "step 1");
  EXPECT_EQ(slices[3].depth, 1);
  EXPECT_EQ(slices[3].begin_ns, 12u);
}

TEST(PerfettoWriterTest, SameCallsGiveIdenticalBytes) {
  const std::string first = WriteSample();
  const std::string second = WriteSample();
  EXPECT_GT(first.size(), 100u);
  EXPECT_EQ(first, second);
}

TEST(PerfettoWriterTest, DescribesTheTrackHierarchy) {
  const Trace trace = ParseTrace(WriteSample());
  std::vector<TrackDescriptor> descriptors;
  for (const TracePacket& packet : trace.packet()) {
    if (packet.has_track_descriptor()) descriptors.push_back(packet.track_descriptor());
  }
  ASSERT_EQ(descriptors.size(), 8u);

  const TrackDescriptor& chip0 = descriptors[0];
  EXPECT_EQ(chip0.uuid(), 1u);
  EXPECT_EQ(chip0.process().pid(), 1);
  EXPECT_EQ(chip0.process().process_name(), "chip 0");
  EXPECT_EQ(chip0.child_ordering(), TrackDescriptor::EXPLICIT);
  EXPECT_FALSE(chip0.has_parent_uuid());

  const TrackDescriptor& dma0 = descriptors[2];
  EXPECT_EQ(dma0.name(), "dma 0");
  EXPECT_EQ(dma0.parent_uuid(), chip0.uuid());
  EXPECT_EQ(dma0.sibling_order_rank(), 1);
  EXPECT_EQ(dma0.sibling_merge_behavior(), TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE);
  EXPECT_FALSE(dma0.has_process());
  EXPECT_FALSE(dma0.has_counter());

  EXPECT_EQ(descriptors[3].parent_uuid(), dma0.uuid());

  const TrackDescriptor& bandwidth = descriptors[4];
  ASSERT_TRUE(bandwidth.has_counter());
  EXPECT_EQ(bandwidth.counter().unit_name(), "bytes/s");
  EXPECT_EQ(bandwidth.sibling_order_rank(), 2);

  const TrackDescriptor& chip1 = descriptors[5];
  EXPECT_EQ(chip1.process().pid(), 2);
  EXPECT_EQ(chip1.sibling_order_rank(), 1);
  EXPECT_EQ(descriptors[7].counter().unit(), CounterDescriptor::UNIT_COUNT);
}

TEST(PerfettoWriterTest, MapsEveryCounterUnit) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip", 0);
  writer.AddCounterTrack(chip, "bytes", CounterUnit::kBytes, 0);
  writer.AddCounterTrack(chip, "time", CounterUnit::kTimeNs, 1);
  writer.Finish();
  const Trace trace = ParseTrace(out.str());
  ASSERT_EQ(trace.packet_size(), 3);
  EXPECT_EQ(trace.packet(1).track_descriptor().counter().unit(),
            CounterDescriptor::UNIT_SIZE_BYTES);
  EXPECT_EQ(trace.packet(2).track_descriptor().counter().unit(), CounterDescriptor::UNIT_TIME_NS);
}

TEST(PerfettoWriterTest, KeepsZeroTimestampsAndZeroCounterValues) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip", 0);
  const TrackId counter = writer.AddCounterTrack(chip, "in flight", CounterUnit::kBytes, 0);
  writer.Counter(counter, 0, 0.0);
  writer.Counter(counter, 999, 0.25);
  writer.Finish();

  const Trace trace = ParseTrace(out.str());
  ASSERT_EQ(trace.packet_size(), 4);
  const TracePacket& zero = trace.packet(2);
  EXPECT_TRUE(zero.has_timestamp());
  EXPECT_EQ(zero.timestamp(), 0u);
  EXPECT_TRUE(zero.track_event().has_counter_value());
  EXPECT_EQ(zero.track_event().counter_value(), 0);
  // Fractional values cannot be int64; 999 ps floors to 0 ns.
  const TracePacket& quarter = trace.packet(3);
  EXPECT_EQ(quarter.timestamp(), 0u);
  EXPECT_TRUE(quarter.track_event().has_double_counter_value());
  EXPECT_EQ(quarter.track_event().double_counter_value(), 0.25);
}

TEST(PerfettoWriterTest, WritesFlowIdsUnpacked) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip", 0);
  const TrackId core = writer.AddTrack(chip, "core", 0);
  constexpr FlowId kFlow = 0x0102030405060708;
  writer.Instant(core, 0, "send", {}, kFlow);
  writer.Instant(core, 0, "receive", {}, 0, kFlow);
  writer.Finish();
  const std::string bytes = out.str();

  // Field 47 as fixed64 has tag (47 << 3) | 1 = 377, the varint F9 02; packed (wire type
  // 2) would be FA 02 followed by a length. The id follows in little-endian order.
  const std::string unpacked_flow_id("\xF9\x02\x08\x07\x06\x05\x04\x03\x02\x01", 10);
  const std::string unpacked_terminating_id("\x81\x03\x08\x07\x06\x05\x04\x03\x02\x01", 10);
  EXPECT_NE(bytes.find(unpacked_flow_id), std::string::npos);
  EXPECT_NE(bytes.find(unpacked_terminating_id), std::string::npos);
  EXPECT_EQ(bytes.find("\xFA\x02"), std::string::npos);
}

TEST(PerfettoWriterTest, InternsEachNameOnceAndFlagsTheSequence) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip", 0);
  const TrackId dma = writer.AddTrack(chip, "dma", 0);
  constexpr int kSlices = 3000;
  const std::string names[] = {"read chunk", "write chunk", "semaphore signal"};
  for (int i = 0; i < kSlices; ++i) {
    writer.Begin(dma, uint64_t(i) * 2000, names[i % 3], {{"chunk", int64_t{i}}});
    writer.End(dma, uint64_t(i) * 2000 + 1000);
  }
  writer.Finish();
  const std::string bytes = out.str();

  const Trace trace = ParseTrace(bytes);
  ASSERT_EQ(trace.packet_size(), 2 + 2 * kSlices);
  EXPECT_EQ(trace.packet(0).sequence_flags(), TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  int interned_event_names = 0;
  int interned_arg_names = 0;
  for (const TracePacket& packet : trace.packet()) {
    EXPECT_EQ(packet.trusted_packet_sequence_id(), PerfettoWriter::kSequenceId);
    interned_event_names += packet.interned_data().event_names_size();
    interned_arg_names += packet.interned_data().debug_annotation_names_size();
    if (packet.has_track_event() && packet.track_event().type() == TrackEvent::TYPE_SLICE_BEGIN) {
      EXPECT_TRUE(packet.sequence_flags() & TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      EXPECT_TRUE(packet.track_event().has_name_iid());
    }
  }
  EXPECT_EQ(interned_event_names, 3);
  EXPECT_EQ(interned_arg_names, 1);
  // Names written inline would cost at least 10 more bytes for every slice.
  EXPECT_LT(bytes.size() / kSlices, 48u);
  EXPECT_TRUE(CheckPerfettoTrace(bytes).ok()) << CheckPerfettoTrace(bytes).ProblemsText();
}

TEST(PerfettoWriterTest, StreamsEventsBeforeFinish) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip", 0);
  const size_t after_descriptor = out.str().size();
  EXPECT_GT(after_descriptor, 0u);
  for (int i = 0; i < 100; ++i) {
    writer.Begin(chip, uint64_t(i) * 10, "work");
    writer.End(chip, uint64_t(i) * 10 + 5);
  }
  // Every event is already in the stream: nothing is held back until Finish.
  EXPECT_GE(out.str().size(), after_descriptor + 200 * 10);
  const size_t before_finish = out.str().size();
  writer.Finish();
  EXPECT_EQ(out.str().size(), before_finish);
}

TEST(PerfettoWriterTest, RejectsMisusedTracks) {
  std::ostringstream out;
  PerfettoWriter writer(out);
  const TrackId chip = writer.AddProcessTrack("chip 0", 0);
  const TrackId counter = writer.AddCounterTrack(chip, "hbm", CounterUnit::kBytes, 0);
  const TrackId core = writer.AddTrack(chip, "core 0", 1);

  try {
    writer.Begin(counter, 0, "oops");
    FAIL() << "Begin on a counter track should throw";
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("chip 0/hbm"));
  }
  try {
    writer.Counter(core, 0, 1);
    FAIL() << "Counter on a slice track should throw";
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("chip 0/core 0"));
    EXPECT_THAT(error.what(), HasSubstr("AddCounterTrack"));
  }
  try {
    writer.End(42, 0);
    FAIL() << "End on an unknown track should throw";
  } catch (const TraceError& error) {
    EXPECT_THAT(error.what(), HasSubstr("track id 42"));
  }
  EXPECT_THROW(writer.AddTrack(counter, "child", 0), TraceError);
  EXPECT_THROW(writer.AddTrack(0, "orphan", 0), TraceError);

  writer.Finish();
  EXPECT_NO_THROW(writer.Finish());
  EXPECT_THROW(writer.Instant(core, 0, "late"), TraceError);
  // None of the rejected calls left anything behind.
  EXPECT_TRUE(CheckPerfettoTrace(out.str()).ok()) << CheckPerfettoTrace(out.str()).ProblemsText();
  EXPECT_EQ(CheckPerfettoTrace(out.str()).summary.tracks, 3u);
}

}  // namespace
}  // namespace tpusim::traces
