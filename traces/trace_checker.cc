#include "traces/trace_checker.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include "traces/perfetto_trace.pb.h"
#include "traces/quoting.h"

namespace tpusim::traces {
namespace {

using perfetto::protos::DebugAnnotation;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackDescriptor;
using perfetto::protos::TrackEvent;

// A systematic bug repeats on every event; the first ones say all there is to say.
constexpr size_t kMaxListedProblems = 100;

std::string Nanoseconds(uint64_t ts_ns) {
  return std::to_string(ts_ns) + " ns";
}

// Reads the protobuf wire format of the outer Trace message by hand, so a trace of any
// length is visited one packet at a time instead of being parsed into one huge message.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : bytes_(bytes) {}

  bool AtEnd() const { return position_ >= bytes_.size(); }
  size_t position() const { return position_; }

  std::optional<uint64_t> ReadVarint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && position_ < bytes_.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes_[position_++]);
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }

  std::optional<std::string_view> ReadBytes(uint64_t length) {
    if (length > bytes_.size() - position_) return std::nullopt;
    std::string_view result = bytes_.substr(position_, length);
    position_ += length;
    return result;
  }

 private:
  std::string_view bytes_;
  size_t position_ = 0;
};

// Walks a trace once, checking the rules and, when asked, recording decoded events.
class TraceWalker {
 public:
  explicit TraceWalker(std::vector<DecodedEvent>* decoded) : decoded_(decoded) {}

  // Returns false when the bytes are not a sequence of Trace fields at all.
  bool Walk(std::string_view bytes);
  TraceCheckResult TakeResult();

 private:
  struct OpenSlice {
    std::string name;
    uint64_t begin_ns;
  };

  struct Track {
    uint64_t uuid = 0;
    uint64_t parent_uuid = 0;
    std::string name;
    std::string path;
    bool is_counter = false;
    bool has_events = false;
    uint64_t last_ts_ns = 0;
    std::vector<OpenSlice> open_slices;
  };

  struct Sequence {
    bool cleared = false;
    bool reported_not_cleared = false;
    std::unordered_map<uint64_t, std::string> event_names;
    std::unordered_map<uint64_t, std::string> annotation_names;
  };

  struct OpenFlow {
    std::string track_path;
    uint64_t ts_ns;
  };

  void Problem(std::string sentence);
  void OnPacket(const TracePacket& packet);
  void OnTrackDescriptor(const TrackDescriptor& descriptor);
  void OnTrackEvent(const TracePacket& packet, Sequence& sequence, uint32_t sequence_id);
  void RequireClearedState(Sequence& sequence, uint32_t sequence_id, std::string_view usage);
  void CheckFlows(const TrackEvent& event, const Track& track, uint64_t ts_ns,
                  std::string_view description);
  void FinishChecks();

  std::vector<DecodedEvent>* decoded_;
  TraceCheckResult result_;
  size_t unlisted_problems_ = 0;
  std::vector<Track> tracks_;  // in file order
  std::unordered_map<uint64_t, size_t> track_index_by_uuid_;
  std::map<uint32_t, Sequence> sequences_;
  std::map<uint64_t, OpenFlow> open_flows_;  // ordered, so reports are deterministic
};

void TraceWalker::Problem(std::string sentence) {
  if (result_.problems.size() < kMaxListedProblems) {
    result_.problems.push_back(std::move(sentence));
  } else {
    ++unlisted_problems_;
  }
}

bool TraceWalker::Walk(std::string_view bytes) {
  WireReader reader(bytes);
  TracePacket packet;
  while (!reader.AtEnd()) {
    const size_t field_start = reader.position();
    const std::optional<uint64_t> tag = reader.ReadVarint();
    if (!tag) {
      Problem("The trace ends inside a field tag at byte " + std::to_string(field_start) +
              "; the file is truncated or not a Perfetto trace.");
      return false;
    }
    const uint64_t field_number = *tag >> 3;
    const uint64_t wire_type = *tag & 7;
    std::optional<std::string_view> payload;
    switch (wire_type) {
      case 0:
        payload = reader.ReadVarint() ? std::optional<std::string_view>("") : std::nullopt;
        break;
      case 1:
        payload = reader.ReadBytes(8);
        break;
      case 2:
        if (const std::optional<uint64_t> length = reader.ReadVarint()) {
          payload = reader.ReadBytes(*length);
        }
        break;
      case 5:
        payload = reader.ReadBytes(4);
        break;
      default:
        break;
    }
    if (!payload) {
      Problem("The field starting at byte " + std::to_string(field_start) +
              " is malformed or runs past the end of the trace; the file is truncated or not "
              "a Perfetto trace.");
      return false;
    }
    // Perfetto ignores fields of Trace other than packet; so do we.
    if (field_number != 1 || wire_type != 2) continue;
    ++result_.summary.packets;
    if (!packet.ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
      Problem("Packet " + std::to_string(result_.summary.packets) + " (at byte " +
              std::to_string(field_start) + ") cannot be parsed as a TracePacket.");
      continue;
    }
    OnPacket(packet);
  }
  FinishChecks();
  return true;
}

void TraceWalker::OnPacket(const TracePacket& packet) {
  const uint32_t sequence_id = packet.trusted_packet_sequence_id();
  if (sequence_id == 0) {
    Problem("Packet " + std::to_string(result_.summary.packets) +
            " has no trusted_packet_sequence_id; every packet needs a non-zero one.");
  }
  Sequence& sequence = sequences_[sequence_id];
  if (packet.sequence_flags() & TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
    sequence.cleared = true;
    sequence.event_names.clear();
    sequence.annotation_names.clear();
  }
  if (packet.has_interned_data()) {
    RequireClearedState(sequence, sequence_id, "carries interned data");
    for (const auto& entry : packet.interned_data().event_names()) {
      sequence.event_names[entry.iid()] = entry.name();
    }
    for (const auto& entry : packet.interned_data().debug_annotation_names()) {
      sequence.annotation_names[entry.iid()] = entry.name();
    }
  }
  if (packet.has_track_descriptor()) OnTrackDescriptor(packet.track_descriptor());
  if (packet.has_track_event()) OnTrackEvent(packet, sequence, sequence_id);
}

void TraceWalker::RequireClearedState(Sequence& sequence, uint32_t sequence_id,
                                      std::string_view usage) {
  if (sequence.cleared || sequence.reported_not_cleared) return;
  sequence.reported_not_cleared = true;
  Problem("Packet " + std::to_string(result_.summary.packets) + " " + std::string(usage) +
          ", but no earlier packet of sequence " + std::to_string(sequence_id) +
          " set SEQ_INCREMENTAL_STATE_CLEARED; the first packet that interns must set it.");
}

void TraceWalker::OnTrackDescriptor(const TrackDescriptor& descriptor) {
  std::string name = descriptor.name();
  if (name.empty()) name = descriptor.process().process_name();
  if (name.empty()) name = descriptor.thread().thread_name();
  if (name.empty()) name = "track " + std::to_string(descriptor.uuid());
  if (descriptor.uuid() == 0) {
    Problem("Track " + Quoted(name) +
            " has uuid 0, which is Perfetto's implicit global track; give it a non-zero uuid.");
    return;
  }
  std::string path = name;
  if (descriptor.parent_uuid() != 0) {
    auto parent = track_index_by_uuid_.find(descriptor.parent_uuid());
    if (parent == track_index_by_uuid_.end()) {
      Problem("Track " + Quoted(name) + " (uuid " + std::to_string(descriptor.uuid()) +
              ") names parent uuid " + std::to_string(descriptor.parent_uuid()) +
              ", which has no descriptor earlier in the file; describe parents first.");
    } else {
      path = tracks_[parent->second].path + "/" + name;
    }
  }
  if (auto existing = track_index_by_uuid_.find(descriptor.uuid());
      existing != track_index_by_uuid_.end()) {
    // Re-describing a track is allowed (Perfetto re-emits descriptors); changing it is not.
    const Track& track = tracks_[existing->second];
    if (track.path != path || track.is_counter != descriptor.has_counter()) {
      Problem("Track uuid " + std::to_string(descriptor.uuid()) + " is described twice, as " +
              Quoted(track.path) + " and as " + Quoted(path) + "; each track needs its own uuid.");
    }
    return;
  }
  Track track;
  track.uuid = descriptor.uuid();
  track.parent_uuid = descriptor.parent_uuid();
  track.name = std::move(name);
  track.path = std::move(path);
  track.is_counter = descriptor.has_counter();
  track_index_by_uuid_[track.uuid] = tracks_.size();
  result_.summary.track_names.push_back(track.path);
  ++result_.summary.tracks;
  tracks_.push_back(std::move(track));
}

void TraceWalker::OnTrackEvent(const TracePacket& packet, Sequence& sequence,
                               uint32_t sequence_id) {
  const TrackEvent& event = packet.track_event();
  const std::string packet_label = "Packet " + std::to_string(result_.summary.packets);
  const uint64_t ts_ns = packet.timestamp();
  if (!packet.has_timestamp()) {
    Problem(packet_label + " carries a track event without a timestamp.");
  }
  result_.summary.last_timestamp_ns = std::max(result_.summary.last_timestamp_ns, ts_ns);

  // Resolve names first, so later sentences can quote them.
  bool uses_interning = false;
  std::string name;
  if (event.has_name_iid()) {
    uses_interning = true;
    auto found = sequence.event_names.find(event.name_iid());
    if (found != sequence.event_names.end()) {
      name = found->second;
    } else {
      Problem(packet_label + " at " + Nanoseconds(ts_ns) + " uses event name iid " +
              std::to_string(event.name_iid()) + ", which no earlier packet of sequence " +
              std::to_string(sequence_id) + " defined in its interned data.");
    }
  } else {
    name = event.name();
  }
  Args args;
  for (const DebugAnnotation& annotation : event.debug_annotations()) {
    Arg arg;
    if (annotation.has_name_iid()) {
      uses_interning = true;
      auto found = sequence.annotation_names.find(annotation.name_iid());
      if (found != sequence.annotation_names.end()) {
        arg.name = found->second;
      } else {
        Problem(packet_label + " at " + Nanoseconds(ts_ns) + " uses argument name iid " +
                std::to_string(annotation.name_iid()) + ", which no earlier packet of sequence " +
                std::to_string(sequence_id) + " defined in its interned data.");
      }
    } else {
      arg.name = annotation.name();
    }
    switch (annotation.value_case()) {
      case DebugAnnotation::kBoolValue:
        arg.value = annotation.bool_value();
        break;
      case DebugAnnotation::kUintValue:
        arg.value = annotation.uint_value();
        break;
      case DebugAnnotation::kIntValue:
        arg.value = annotation.int_value();
        break;
      case DebugAnnotation::kDoubleValue:
        arg.value = annotation.double_value();
        break;
      case DebugAnnotation::kStringValue:
        arg.value = annotation.string_value();
        break;
      case DebugAnnotation::VALUE_NOT_SET:
        arg.value = std::string();
        break;
    }
    args.push_back(std::move(arg));
  }
  if (uses_interning) {
    RequireClearedState(sequence, sequence_id, "uses interned names");
    if (!(packet.sequence_flags() & TracePacket::SEQ_NEEDS_INCREMENTAL_STATE)) {
      Problem(packet_label + " at " + Nanoseconds(ts_ns) +
              " uses interned names but does not set SEQ_NEEDS_INCREMENTAL_STATE.");
    }
  }

  const std::string quoted_name = Quoted(name);
  std::string description;
  switch (event.type()) {
    case TrackEvent::TYPE_SLICE_BEGIN:
      description = "the BEGIN of " + quoted_name;
      break;
    case TrackEvent::TYPE_SLICE_END:
      description = "the END";
      break;
    case TrackEvent::TYPE_INSTANT:
      description = "the instant " + quoted_name;
      break;
    case TrackEvent::TYPE_COUNTER:
      description = "the counter sample";
      break;
    default:
      Problem(packet_label + " at " + Nanoseconds(ts_ns) +
              " carries a track event with no known type (" + std::to_string(event.type()) +
              "); use SLICE_BEGIN, SLICE_END, INSTANT or COUNTER.");
      return;
  }
  auto track_index = track_index_by_uuid_.find(event.track_uuid());
  if (track_index == track_index_by_uuid_.end()) {
    Problem("At " + Nanoseconds(ts_ns) + ", " + description + " refers to track uuid " +
            std::to_string(event.track_uuid()) +
            ", which has no descriptor earlier in the file; write each TrackDescriptor before "
            "the events that use it.");
    return;
  }
  Track& track = tracks_[track_index->second];
  const std::string on_track = "On track " + Quoted(track.path) + ", ";
  if (track.has_events && ts_ns < track.last_ts_ns) {
    Problem(on_track + description + " at " + Nanoseconds(ts_ns) + " comes after an event at " +
            Nanoseconds(track.last_ts_ns) +
            "; events on a track must be in timestamp order, so slices nest strictly.");
  }
  track.has_events = true;
  track.last_ts_ns = std::max(track.last_ts_ns, ts_ns);

  const bool is_counter_event = event.type() == TrackEvent::TYPE_COUNTER;
  if (track.is_counter && !is_counter_event) {
    Problem(on_track + description + " at " + Nanoseconds(ts_ns) +
            " is on a counter track; slices and instants need a track without a "
            "CounterDescriptor.");
  } else if (!track.is_counter && is_counter_event) {
    Problem(on_track + description + " at " + Nanoseconds(ts_ns) +
            " is on a track without a CounterDescriptor; counter values belong on counter "
            "tracks.");
  }

  DecodedEvent decoded;
  decoded.ts_ns = ts_ns;
  switch (event.type()) {
    case TrackEvent::TYPE_SLICE_BEGIN:
      decoded.type = DecodedEvent::Type::kSliceBegin;
      track.open_slices.push_back({name, ts_ns});
      ++result_.summary.slices;
      ++result_.summary.slices_per_track_name[track.path];
      break;
    case TrackEvent::TYPE_SLICE_END:
      decoded.type = DecodedEvent::Type::kSliceEnd;
      if (track.open_slices.empty()) {
        Problem(on_track + "the END at " + Nanoseconds(ts_ns) +
                " has no matching BEGIN; slices on a track must nest strictly.");
      } else {
        name = std::move(track.open_slices.back().name);
        track.open_slices.pop_back();
      }
      break;
    case TrackEvent::TYPE_INSTANT:
      decoded.type = DecodedEvent::Type::kInstant;
      ++result_.summary.instants;
      break;
    default:
      decoded.type = DecodedEvent::Type::kCounter;
      ++result_.summary.counter_samples;
      if (event.has_counter_value()) {
        decoded.value = static_cast<double>(event.counter_value());
      } else if (event.has_double_counter_value()) {
        decoded.value = event.double_counter_value();
      } else {
        Problem(on_track + "the counter sample at " + Nanoseconds(ts_ns) +
                " has neither counter_value nor double_counter_value.");
      }
      break;
  }
  CheckFlows(event, track, ts_ns, description);

  if (decoded_ != nullptr) {
    decoded.track = track.path;
    decoded.name = std::move(name);
    decoded.args = std::move(args);
    decoded.flow_ids.assign(event.flow_ids().begin(), event.flow_ids().end());
    decoded.terminating_flow_ids.assign(event.terminating_flow_ids().begin(),
                                        event.terminating_flow_ids().end());
    decoded_->push_back(std::move(decoded));
  }
}

void TraceWalker::CheckFlows(const TrackEvent& event, const Track& track, uint64_t ts_ns,
                             std::string_view description) {
  for (const uint64_t flow : event.flow_ids()) {
    // A second event naming an open flow continues it, as Perfetto draws chains of arrows.
    if (open_flows_.emplace(flow, OpenFlow{track.path, ts_ns}).second) {
      ++result_.summary.flows;
    }
  }
  for (const uint64_t flow : event.terminating_flow_ids()) {
    if (open_flows_.erase(flow) == 0) {
      Problem("On track " + Quoted(track.path) + ", " + std::string(description) + " at " +
              Nanoseconds(ts_ns) + " terminates flow " + std::to_string(flow) +
              ", which was never started or was already terminated.");
    }
  }
}

void TraceWalker::FinishChecks() {
  for (const Track& track : tracks_) {
    for (const OpenSlice& slice : track.open_slices) {
      Problem("On track " + Quoted(track.path) + ", the slice " + Quoted(slice.name) +
              " begun at " + Nanoseconds(slice.begin_ns) +
              " is never ended; every BEGIN needs an END on the same track.");
    }
  }
  for (const auto& [flow, start] : open_flows_) {
    Problem("Flow " + std::to_string(flow) + ", started on track " + Quoted(start.track_path) +
            " at " + Nanoseconds(start.ts_ns) + ", is never terminated.");
  }
}

TraceCheckResult TraceWalker::TakeResult() {
  if (unlisted_problems_ > 0) {
    result_.problems.push_back(std::to_string(unlisted_problems_) +
                               " further problems were found but not listed.");
    unlisted_problems_ = 0;
  }
  return std::move(result_);
}

}  // namespace

std::string TraceCheckResult::ProblemsText() const {
  std::string text;
  for (const std::string& problem : problems) {
    text += problem;
    text += '\n';
  }
  return text;
}

TraceCheckResult CheckPerfettoTrace(std::string_view bytes) {
  TraceWalker walker(nullptr);
  walker.Walk(bytes);
  TraceCheckResult result = walker.TakeResult();
  if (result.summary.packets == 0) {
    result.problems.push_back(
        bytes.empty() ? "the file is empty, so it holds no trace packets; a tpusim trace has at "
                        "least its track descriptors (was the run's trace written?)."
                      : "the file holds no trace packets (field 1 of perfetto.protos.Trace); it "
                        "is not a Perfetto trace.");
  }
  return result;
}

TraceCheckResult CheckPerfettoTraceFile(const std::string& path) {
  std::string bytes;
  try {
    bytes = ReadTraceFile(path);
  } catch (const TraceError& error) {
    TraceCheckResult result;
    result.problems.push_back(error.what());
    return result;
  }
  return CheckPerfettoTrace(bytes);
}

std::vector<DecodedEvent> DecodePerfettoTrace(std::string_view bytes) {
  std::vector<DecodedEvent> events;
  TraceWalker walker(&events);
  if (!walker.Walk(bytes)) {
    const TraceCheckResult result = walker.TakeResult();
    throw TraceError("Cannot decode the Perfetto trace: " + result.problems.back());
  }
  return events;
}

}  // namespace tpusim::traces
