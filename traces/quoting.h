#pragma once
// How the trace checker and the trace file reader quote names and paths in messages.

#include <string>
#include <string_view>

namespace tpusim::traces {

// Appended piece by piece: GCC 12 -O3 misreads `"\"" + std::string(text)` as an
// overlapping memcpy once this is inlined (-Wrestrict; see base/text.h).
inline std::string Quoted(std::string_view text) {
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  quoted += text;
  quoted += '"';
  return quoted;
}

}  // namespace tpusim::traces
