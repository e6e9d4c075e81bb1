#include "traces/chrome_json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <utility>
#include <variant>

namespace tpusim::traces {
namespace {

constexpr uint64_t kPicosecondsPerMicrosecond = 1'000'000;

void AppendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

template <typename Integer>
void AppendInteger(std::string& out, Integer value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, result.ptr);
}

// JSON has no infinities or NaN, so those are written as strings rather than making the
// whole file unreadable.
void AppendDouble(std::string& out, double value) {
  if (!std::isfinite(value)) {
    AppendJsonString(out, std::isnan(value) ? "NaN" : (value > 0 ? "Infinity" : "-Infinity"));
    return;
  }
  // Shortest text that reads back as the same double, independent of locale.
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, result.ptr);
}

// Exact decimal microseconds from integer picoseconds, avoiding binary-float rounding.
void AppendMicroseconds(std::string& out, uint64_t ts_ps) {
  AppendInteger(out, ts_ps / kPicosecondsPerMicrosecond);
  uint64_t fraction = ts_ps % kPicosecondsPerMicrosecond;
  if (fraction == 0) return;
  char digits[7];
  std::snprintf(digits, sizeof(digits), "%06llu", static_cast<unsigned long long>(fraction));
  size_t length = 6;
  while (digits[length - 1] == '0')
    --length;
  out.push_back('.');
  out.append(digits, length);
}

void AppendArgValue(std::string& out, const Arg& arg) {
  std::visit(
      [&out](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>) {
          out += value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          AppendDouble(out, value);
        } else if constexpr (std::is_same_v<T, std::string>) {
          AppendJsonString(out, value);
        } else {
          AppendInteger(out, value);
        }
      },
      arg.value);
}

void AppendArgs(std::string& out, const Args& args) {
  if (args.empty()) return;
  out += ",\"args\":{";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(out, args[i].name);
    out.push_back(':');
    AppendArgValue(out, args[i]);
  }
  out.push_back('}');
}

}  // namespace

ChromeJsonWriter::ChromeJsonWriter(std::ostream& out) : output_(out) {
  output_.Write("{\"traceEvents\":[");
}

ChromeJsonWriter::ChromeJsonWriter(std::unique_ptr<std::ostream> out, std::string destination)
    : output_(std::move(out), std::move(destination)) {
  output_.Write("{\"traceEvents\":[");
}

ChromeJsonWriter::~ChromeJsonWriter() {
  try {
    Finish();
  } catch (const TraceError&) {
    // A destructor must not throw; callers who care call Finish themselves.
  }
}

std::string_view ChromeJsonWriter::PathBelowProcess(const internal::TrackInfo& track) const {
  if (track.kind == internal::TrackKind::kProcess) return track.path;
  // Cut by the process name's length: the name may itself contain '/'.
  const size_t process_name_length = tracks_.Get(track.process).name.size();
  return std::string_view(track.path).substr(process_name_length + 1);
}

void ChromeJsonWriter::RequireOpen(std::string_view operation) const {
  if (finished_) {
    throw TraceError(std::string(operation) + " was called after Finish on the trace for " +
                     output_.destination() + "; record everything before finishing the trace");
  }
}

void ChromeJsonWriter::StartEvent() {
  line_.clear();
  line_ += wrote_event_ ? ",\n" : "\n";
  wrote_event_ = true;
}

void ChromeJsonWriter::AppendNameMetadata(std::string_view kind, int64_t pid, int64_t tid,
                                          std::string_view name) {
  StartEvent();
  line_ += "{\"name\":";
  AppendJsonString(line_, kind);
  line_ += ",\"ph\":\"M\",\"pid\":";
  AppendInteger(line_, pid);
  if (tid != 0) {
    line_ += ",\"tid\":";
    AppendInteger(line_, tid);
  }
  line_ += ",\"args\":{\"name\":";
  AppendJsonString(line_, name);
  line_ += "}}";
  output_.Write(line_);
}

void ChromeJsonWriter::AppendSortMetadata(std::string_view kind, int64_t pid, int64_t tid,
                                          int rank) {
  StartEvent();
  line_ += "{\"name\":";
  AppendJsonString(line_, kind);
  line_ += ",\"ph\":\"M\",\"pid\":";
  AppendInteger(line_, pid);
  if (tid != 0) {
    line_ += ",\"tid\":";
    AppendInteger(line_, tid);
  }
  line_ += ",\"args\":{\"sort_index\":";
  AppendInteger(line_, rank);
  line_ += "}}";
  output_.Write(line_);
}

TrackId ChromeJsonWriter::AddProcessTrack(std::string_view name, int rank) {
  RequireOpen("AddProcessTrack");
  const internal::TrackInfo& track = tracks_.AddProcess(name, rank);
  const int64_t pid = next_thread_id_++;
  thread_ids_.push_back(pid);
  AppendNameMetadata("process_name", pid, 0, track.name);
  AppendSortMetadata("process_sort_index", pid, 0, rank);
  AppendNameMetadata("thread_name", pid, pid, track.name);
  return track.id;
}

TrackId ChromeJsonWriter::AddTrack(TrackId parent, std::string_view name, int rank) {
  RequireOpen("AddTrack");
  const internal::TrackInfo& track =
      tracks_.AddChild(parent, name, internal::TrackKind::kSlice, rank);
  const int64_t pid = thread_ids_[track.process - 1];
  const int64_t tid = next_thread_id_++;
  thread_ids_.push_back(tid);
  AppendNameMetadata("thread_name", pid, tid, PathBelowProcess(track));
  AppendSortMetadata("thread_sort_index", pid, tid, rank);
  return track.id;
}

TrackId ChromeJsonWriter::AddCounterTrack(TrackId parent, std::string_view name, CounterUnit unit,
                                          int rank) {
  RequireOpen("AddCounterTrack");
  const internal::TrackInfo& track =
      tracks_.AddChild(parent, name, internal::TrackKind::kCounter, rank, unit);
  thread_ids_.push_back(0);
  return track.id;
}

void ChromeJsonWriter::AppendEventStart(std::string_view phase, const internal::TrackInfo& track,
                                        uint64_t ts_ps) {
  StartEvent();
  line_ += "{\"ph\":\"";
  line_ += phase;
  line_ += "\",\"ts\":";
  AppendMicroseconds(line_, ts_ps);
  line_ += ",\"pid\":";
  AppendInteger(line_, thread_ids_[track.process - 1]);
  if (track.kind != internal::TrackKind::kCounter) {
    line_ += ",\"tid\":";
    AppendInteger(line_, thread_ids_[track.id - 1]);
  }
}

void ChromeJsonWriter::AppendFlows(const internal::TrackInfo& track, uint64_t ts_ps,
                                   FlowId flow_out, FlowId flow_in) {
  // "s" binds to the slice enclosing it; "f" with "bp":"e" binds to the enclosing slice
  // too, rather than to whatever slice starts next on the thread.
  if (flow_out != 0) {
    AppendEventStart("s", track, ts_ps);
    line_ += ",\"name\":\"flow\",\"cat\":\"flow\",\"id\":";
    AppendInteger(line_, flow_out);
    line_ += "}";
    output_.Write(line_);
  }
  if (flow_in != 0) {
    AppendEventStart("f", track, ts_ps);
    line_ += ",\"bp\":\"e\",\"name\":\"flow\",\"cat\":\"flow\",\"id\":";
    AppendInteger(line_, flow_in);
    line_ += "}";
    output_.Write(line_);
  }
}

void ChromeJsonWriter::Begin(TrackId track, uint64_t ts_ps, std::string_view name, const Args& args,
                             FlowId flow_out, FlowId flow_in) {
  RequireOpen("Begin");
  const internal::TrackInfo& info = tracks_.SliceTrack(track, "Begin");
  AppendEventStart("B", info, ts_ps);
  line_ += ",\"name\":";
  AppendJsonString(line_, name);
  AppendArgs(line_, args);
  line_ += "}";
  output_.Write(line_);
  AppendFlows(info, ts_ps, flow_out, flow_in);
}

void ChromeJsonWriter::End(TrackId track, uint64_t ts_ps) {
  RequireOpen("End");
  const internal::TrackInfo& info = tracks_.SliceTrack(track, "End");
  AppendEventStart("E", info, ts_ps);
  line_ += "}";
  output_.Write(line_);
}

void ChromeJsonWriter::Instant(TrackId track, uint64_t ts_ps, std::string_view name,
                               const Args& args, FlowId flow_out, FlowId flow_in) {
  RequireOpen("Instant");
  const internal::TrackInfo& info = tracks_.SliceTrack(track, "Instant");
  AppendEventStart("i", info, ts_ps);
  line_ += ",\"s\":\"t\",\"name\":";
  AppendJsonString(line_, name);
  AppendArgs(line_, args);
  line_ += "}";
  output_.Write(line_);
  AppendFlows(info, ts_ps, flow_out, flow_in);
}

void ChromeJsonWriter::Counter(TrackId track, uint64_t ts_ps, double value) {
  RequireOpen("Counter");
  const internal::TrackInfo& info = tracks_.CounterTrack(track, "Counter");
  AppendEventStart("C", info, ts_ps);
  line_ += ",\"name\":";
  AppendJsonString(line_, PathBelowProcess(info));
  line_ += ",\"args\":{\"value\":";
  AppendDouble(line_, value);
  line_ += "}}";
  output_.Write(line_);
}

void ChromeJsonWriter::Finish() {
  if (finished_) return;
  finished_ = true;
  output_.Write("\n],\"displayTimeUnit\":\"ns\"}\n");
  output_.Flush();
}

}  // namespace tpusim::traces
