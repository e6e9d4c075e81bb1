#include "traces/perfetto_writer.h"

#include <cmath>
#include <type_traits>
#include <utility>
#include <variant>

namespace tpusim::traces {
namespace {

using perfetto::protos::CounterDescriptor;
using perfetto::protos::DebugAnnotation;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackDescriptor;
using perfetto::protos::TrackEvent;

constexpr uint64_t kPicosecondsPerNanosecond = 1000;
// Trace.packet is field 1 with wire type 2 (length-delimited).
constexpr char kTracePacketTag = 0x0A;

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Perfetto stores integral counter values exactly as int64; everything else as a double.
bool FitsInt64Exactly(double value) {
  constexpr double kTwoToThe63 = 9223372036854775808.0;
  return std::isfinite(value) && value == std::trunc(value) && value >= -kTwoToThe63 &&
         value < kTwoToThe63;
}

void SetCounterUnit(CounterUnit unit, CounterDescriptor& counter) {
  switch (unit) {
    case CounterUnit::kCount:
      counter.set_unit(CounterDescriptor::UNIT_COUNT);
      return;
    case CounterUnit::kBytes:
      counter.set_unit(CounterDescriptor::UNIT_SIZE_BYTES);
      return;
    case CounterUnit::kTimeNs:
      counter.set_unit(CounterDescriptor::UNIT_TIME_NS);
      return;
    case CounterUnit::kBytesPerSecond:
      // Perfetto has no enumerator for a rate, so the unit is spelled out.
      counter.set_unit_name("bytes/s");
      return;
  }
}

void SetAnnotationValue(const Arg& arg, DebugAnnotation& annotation) {
  std::visit(
      [&annotation](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          annotation.set_int_value(value);
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          annotation.set_uint_value(value);
        } else if constexpr (std::is_same_v<T, double>) {
          annotation.set_double_value(value);
        } else if constexpr (std::is_same_v<T, bool>) {
          annotation.set_bool_value(value);
        } else {
          static_assert(std::is_same_v<T, std::string>);
          annotation.set_string_value(value);
        }
      },
      arg.value);
}

}  // namespace

PerfettoWriter::PerfettoWriter(std::ostream& out) : output_(out) {}

PerfettoWriter::PerfettoWriter(std::unique_ptr<std::ostream> out, std::string destination)
    : output_(std::move(out), std::move(destination)) {}

PerfettoWriter::~PerfettoWriter() {
  try {
    Finish();
  } catch (const TraceError&) {
    // A destructor must not throw; callers who care call Finish themselves.
  }
}

TrackId PerfettoWriter::AddProcessTrack(std::string_view name, int rank) {
  StartPacket("AddProcessTrack");
  const internal::TrackInfo& track = tracks_.AddProcess(name, rank);
  WriteTrackDescriptor(track);
  return track.id;
}

TrackId PerfettoWriter::AddTrack(TrackId parent, std::string_view name, int rank) {
  StartPacket("AddTrack");
  const internal::TrackInfo& track =
      tracks_.AddChild(parent, name, internal::TrackKind::kSlice, rank);
  WriteTrackDescriptor(track);
  return track.id;
}

TrackId PerfettoWriter::AddCounterTrack(TrackId parent, std::string_view name, CounterUnit unit,
                                        int rank) {
  StartPacket("AddCounterTrack");
  const internal::TrackInfo& track =
      tracks_.AddChild(parent, name, internal::TrackKind::kCounter, rank, unit);
  WriteTrackDescriptor(track);
  return track.id;
}

void PerfettoWriter::WriteTrackDescriptor(const internal::TrackInfo& track) {
  TrackDescriptor& descriptor = *packet_.mutable_track_descriptor();
  descriptor.set_uuid(track.id);
  descriptor.set_name(track.name);
  descriptor.set_sibling_order_rank(track.rank);
  switch (track.kind) {
    case internal::TrackKind::kProcess:
      descriptor.mutable_process()->set_pid(next_pid_++);
      descriptor.mutable_process()->set_process_name(track.name);
      descriptor.set_child_ordering(TrackDescriptor::EXPLICIT);
      break;
    case internal::TrackKind::kSlice:
      descriptor.set_parent_uuid(track.parent);
      // Slice tracks may have children of their own, ordered by rank like a chip's.
      descriptor.set_child_ordering(TrackDescriptor::EXPLICIT);
      // Same-named siblings (two links called "x+") must stay separate tracks.
      descriptor.set_sibling_merge_behavior(TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE);
      break;
    case internal::TrackKind::kCounter:
      descriptor.set_parent_uuid(track.parent);
      descriptor.set_sibling_merge_behavior(TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE);
      SetCounterUnit(track.unit, *descriptor.mutable_counter());
      break;
  }
  WritePacket();
}

void PerfettoWriter::Begin(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args,
                           FlowId flow_out, FlowId flow_in) {
  StartPacket("Begin");
  tracks_.SliceTrack(track, "Begin");
  WriteEvent(TrackEvent::TYPE_SLICE_BEGIN, track, ts_ps, name, args, flow_out, flow_in);
}

void PerfettoWriter::End(TrackId track, uint64_t ts_ps) {
  StartPacket("End");
  tracks_.SliceTrack(track, "End");
  packet_.set_timestamp(ts_ps / kPicosecondsPerNanosecond);
  TrackEvent& event = *packet_.mutable_track_event();
  event.set_type(TrackEvent::TYPE_SLICE_END);
  event.set_track_uuid(track);
  WritePacket();
}

void PerfettoWriter::Instant(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args,
                             FlowId flow_out, FlowId flow_in) {
  StartPacket("Instant");
  tracks_.SliceTrack(track, "Instant");
  WriteEvent(TrackEvent::TYPE_INSTANT, track, ts_ps, name, args, flow_out, flow_in);
}

void PerfettoWriter::Counter(TrackId track, uint64_t ts_ps, double value) {
  StartPacket("Counter");
  tracks_.CounterTrack(track, "Counter");
  packet_.set_timestamp(ts_ps / kPicosecondsPerNanosecond);
  TrackEvent& event = *packet_.mutable_track_event();
  event.set_type(TrackEvent::TYPE_COUNTER);
  event.set_track_uuid(track);
  if (FitsInt64Exactly(value)) {
    event.set_counter_value(static_cast<int64_t>(value));
  } else {
    event.set_double_counter_value(value);
  }
  WritePacket();
}

void PerfettoWriter::WriteEvent(TrackEvent::Type type, TrackId track, uint64_t ts_ps,
                                std::string_view name, const Args& args, FlowId flow_out,
                                FlowId flow_in) {
  packet_.set_timestamp(ts_ps / kPicosecondsPerNanosecond);
  packet_.set_sequence_flags(packet_.sequence_flags() | TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  TrackEvent& event = *packet_.mutable_track_event();
  event.set_type(type);
  event.set_track_uuid(track);
  event.set_name_iid(InternEventName(name));
  for (const Arg& arg : args) {
    DebugAnnotation& annotation = *event.add_debug_annotations();
    annotation.set_name_iid(InternArgName(arg.name));
    SetAnnotationValue(arg, annotation);
  }
  if (flow_out != 0) event.add_flow_ids(flow_out);
  if (flow_in != 0) event.add_terminating_flow_ids(flow_in);
  WritePacket();
}

uint64_t PerfettoWriter::InternEventName(std::string_view name) {
  if (auto found = event_name_iids_.find(name); found != event_name_iids_.end()) {
    return found->second;
  }
  const uint64_t iid = event_name_iids_.size() + 1;
  event_name_iids_.emplace(std::string(name), iid);
  auto& entry = *packet_.mutable_interned_data()->add_event_names();
  entry.set_iid(iid);
  entry.set_name(std::string(name));
  return iid;
}

uint64_t PerfettoWriter::InternArgName(std::string_view name) {
  if (auto found = arg_name_iids_.find(name); found != arg_name_iids_.end()) {
    return found->second;
  }
  const uint64_t iid = arg_name_iids_.size() + 1;
  arg_name_iids_.emplace(std::string(name), iid);
  auto& entry = *packet_.mutable_interned_data()->add_debug_annotation_names();
  entry.set_iid(iid);
  entry.set_name(std::string(name));
  return iid;
}

TracePacket& PerfettoWriter::StartPacket(std::string_view operation) {
  if (finished_) {
    throw TraceError(std::string(operation) + " was called after Finish on the trace for " +
                     output_.destination() + "; record everything before finishing the trace");
  }
  packet_.Clear();
  packet_.set_trusted_packet_sequence_id(kSequenceId);
  if (!wrote_first_packet_) {
    packet_.set_sequence_flags(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  }
  return packet_;
}

void PerfettoWriter::WritePacket() {
  // ByteSizeLong caches every submessage's size, which the serializer below reuses.
  const size_t packet_bytes = packet_.ByteSizeLong();
  serialized_.clear();
  serialized_.push_back(kTracePacketTag);
  AppendVarint(serialized_, packet_bytes);
  const size_t header_bytes = serialized_.size();
  serialized_.resize(header_bytes + packet_bytes);
  packet_.SerializeWithCachedSizesToArray(
      reinterpret_cast<uint8_t*>(serialized_.data() + header_bytes));
  output_.Write(serialized_);
  wrote_first_packet_ = true;
}

void PerfettoWriter::Finish() {
  if (finished_) return;
  finished_ = true;
  output_.Flush();
}

}  // namespace tpusim::traces
