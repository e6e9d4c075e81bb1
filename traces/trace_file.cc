// Reading a trace file whole, and what tests and tools do with decoded events: pair
// BEGINs with ENDs into slices, and print both.

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <unordered_map>
#include <utility>

#include "traces/quoting.h"
#include "traces/trace_checker.h"

namespace tpusim::traces {

std::vector<DecodedSlice> PairSlices(const std::vector<DecodedEvent>& events) {
  std::vector<DecodedSlice> slices;
  // Indices into `slices` of each track's open slices, innermost last.
  std::unordered_map<std::string, std::vector<size_t>> open_by_track;
  std::vector<bool> closed;
  for (const DecodedEvent& event : events) {
    if (event.type == DecodedEvent::Type::kSliceBegin) {
      std::vector<size_t>& open = open_by_track[event.track];
      slices.push_back(DecodedSlice{event.track, event.name, event.ts_ns, event.ts_ns,
                                    static_cast<int>(open.size()), event.args});
      closed.push_back(false);
      open.push_back(slices.size() - 1);
    } else if (event.type == DecodedEvent::Type::kSliceEnd) {
      std::vector<size_t>& open = open_by_track[event.track];
      if (open.empty()) continue;
      slices[open.back()].end_ns = event.ts_ns;
      closed[open.back()] = true;
      open.pop_back();
    }
  }
  std::vector<DecodedSlice> complete;
  complete.reserve(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    if (closed[i]) complete.push_back(std::move(slices[i]));
  }
  return complete;
}

std::string ReadTraceFile(const std::string& path) {
  std::error_code status_error;
  const auto status = std::filesystem::status(path, status_error);
  if (std::filesystem::is_directory(status)) {
    throw TraceError("tpusim cannot read trace file " + Quoted(path) +
                     ": it is a directory; name a trace file inside it.");
  }
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw TraceError("tpusim cannot read trace file " + Quoted(path) +
                     ": it is not a regular file (a device, pipe or socket); name a trace file.");
  }
  errno = 0;
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    throw TraceError("tpusim cannot read trace file " + Quoted(path) + ": " +
                     (errno != 0 ? std::strerror(errno) : "unknown reason") + ".");
  }
  // Sized up front, so a large trace is held once rather than copied out of a stream.
  const std::streamoff size = file.tellg();
  if (size > static_cast<std::streamoff>(kMaxTraceFileBytes)) {
    throw TraceError("tpusim cannot read trace file " + Quoted(path) + ": it has " +
                     std::to_string(size) + " bytes, more than the checker reads (" +
                     std::to_string(kMaxTraceFileBytes) +
                     " bytes, 2 GiB). Check a trace of a shorter run, or one with less detail.");
  }
  std::string bytes;
  try {
    bytes.resize(size > 0 ? static_cast<size_t>(size) : 0);
  } catch (const std::bad_alloc&) {
    throw TraceError("tpusim cannot read trace file " + Quoted(path) + ": its " +
                     std::to_string(size) + " bytes do not fit in host memory.");
  }
  file.seekg(0);
  if (size < 0 || !file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw TraceError("tpusim cannot read trace file " + Quoted(path) +
                     ": it could not be read to the end (is it a regular file?).");
  }
  return bytes;
}

std::string_view ToString(DecodedEvent::Type type) {
  switch (type) {
    case DecodedEvent::Type::kSliceBegin:
      return "BEGIN";
    case DecodedEvent::Type::kSliceEnd:
      return "END";
    case DecodedEvent::Type::kInstant:
      return "INSTANT";
    case DecodedEvent::Type::kCounter:
      return "COUNTER";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& out, const DecodedEvent& event) {
  out << ToString(event.type) << " " << Quoted(event.name) << " on " << Quoted(event.track)
      << " at " << event.ts_ns << " ns";
  if (event.type == DecodedEvent::Type::kCounter) out << " value " << event.value;
  return out;
}

std::ostream& operator<<(std::ostream& out, const DecodedSlice& slice) {
  return out << "slice " << Quoted(slice.name) << " on " << Quoted(slice.track) << " from "
             << slice.begin_ns << " ns to " << slice.end_ns << " ns";
}

}  // namespace tpusim::traces
