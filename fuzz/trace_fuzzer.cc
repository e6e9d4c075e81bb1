// libFuzzer target: arbitrary bytes through the trace checker's decoder and rule checks.
// Bytes that are not a trace must end in TraceError (decoder) or a list of problems
// (checker); anything else is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "traces/trace_checker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    (void)tpusim::traces::PairSlices(tpusim::traces::DecodePerfettoTrace(bytes));
  } catch (const tpusim::traces::TraceError&) {
  }
  (void)tpusim::traces::CheckPerfettoTrace(bytes);
  return 0;
}
