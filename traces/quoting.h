#pragma once
// How the trace checker and the trace file reader quote names and paths in messages.

#include <string>
#include <string_view>

namespace tpusim::traces {

inline std::string Quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

}  // namespace tpusim::traces
