#pragma once
// Small text helpers every layer uses to build messages.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace tpusim::base {

// Appends `item` to a `separator`-separated list. Spelled out, not as
// `list += (list.empty() ? "" : sep) + item`: GCC 12 at -O3 reads that expression's
// pointer arithmetic as a possibly overlapping memcpy (-Wrestrict), a false positive that
// -Werror turns into a failed build.
inline void AppendListItem(std::string& list, std::string_view separator, std::string_view item) {
  if (!list.empty()) list += separator;
  list += item;
}

// "{0, 1, 2}": a list of integers as messages print it.
template <typename Int>
std::string JoinInts(const std::vector<Int>& values) {
  std::string list = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) list += ", ";
    list += std::to_string(values[i]);
  }
  list += "}";
  return list;
}

// A number as a message shows a value the user gave: whole numbers in full ("1048576",
// "2147483648"), others as %g ("4.5e+10", "1e+300", "nan", "-inf").
inline std::string NumberText(double value) {
  if (std::abs(value) <= 9007199254740992.0 /* 2^53 */ && value == std::floor(value))
    return std::to_string(static_cast<int64_t>(value));
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace tpusim::base
