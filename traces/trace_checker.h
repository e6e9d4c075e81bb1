#pragma once

// Reads Perfetto traces back: a checker that enforces the rules of docs/references.md section 6
// (every trace a test writes must pass it), and a decoder into plain structs, so tests
// can assert "there is a slice named X on track chip 0/core 0" without protobuf.

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "traces/trace_sink.h"

namespace tpusim::traces {

struct TraceSummary {
  size_t packets = 0;
  size_t tracks = 0;  // distinct track uuids described
  size_t slices = 0;  // SLICE_BEGIN events
  size_t instants = 0;
  size_t counter_samples = 0;
  size_t flows = 0;  // distinct flows started
  uint64_t last_timestamp_ns = 0;
  // Full track paths ("chip 0/core 0"), in the order their descriptors appear.
  std::vector<std::string> track_names;
  // SLICE_BEGIN events per full track path.
  std::map<std::string, size_t> slices_per_track_name;
};

struct TraceCheckResult {
  // Whole sentences, each naming the track (by path) and the timestamp where it applies.
  std::vector<std::string> problems;
  TraceSummary summary;

  bool ok() const { return problems.empty(); }
  // All problems, one per line, for test failure messages.
  std::string ProblemsText() const;
};

// Checks a whole Perfetto trace held in memory.
TraceCheckResult CheckPerfettoTrace(std::string_view bytes);
// Checks a trace file; a file that cannot be read is reported as a problem ("cannot read").
TraceCheckResult CheckPerfettoTraceFile(const std::string& path);

struct DecodedEvent {
  enum class Type { kSliceBegin, kSliceEnd, kInstant, kCounter };

  Type type = Type::kInstant;
  // Track names from the top-level track down, joined by "/": "chip 0/core 0".
  std::string track;
  // For kSliceEnd, the name of the slice it closes; empty for counters.
  std::string name;
  uint64_t ts_ns = 0;
  double value = 0;  // kCounter only
  Args args;
  std::vector<FlowId> flow_ids;
  std::vector<FlowId> terminating_flow_ids;
};

// A BEGIN paired with its END.
struct DecodedSlice {
  std::string track;
  std::string name;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  int depth = 0;  // 0 for a slice with no enclosing slice on its track
  Args args;

  uint64_t duration_ns() const { return end_ns - begin_ns; }
};

// Decodes every track event in file order. Throws TraceError when the bytes are not a
// Perfetto trace; rule violations are the checker's business and do not throw here.
std::vector<DecodedEvent> DecodePerfettoTrace(std::string_view bytes);
// Pairs BEGINs with their ENDs, in order of their BEGIN; unclosed slices are left out.
std::vector<DecodedSlice> PairSlices(const std::vector<DecodedEvent>& events);
// The most ReadTraceFile reads: the checker holds a trace in memory whole, and decoding
// a few GiB takes tens of seconds.
inline constexpr uint64_t kMaxTraceFileBytes = uint64_t{2} << 30;  // 2 GiB
// The whole file; throws TraceError naming the path and the reason when it cannot be read
// or is larger than kMaxTraceFileBytes.
std::string ReadTraceFile(const std::string& path);

std::string_view ToString(DecodedEvent::Type type);
// Lets test failures show events readably.
std::ostream& operator<<(std::ostream& out, const DecodedEvent& event);
std::ostream& operator<<(std::ostream& out, const DecodedSlice& slice);

}  // namespace tpusim::traces
