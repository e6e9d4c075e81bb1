#include "base/time.h"

#include <cstdio>

namespace tpusim::base {

std::string FormatTime(Picoseconds t) {
  char text[64];
  const double ps = static_cast<double>(t);
  if (ps >= 1e12) {
    std::snprintf(text, sizeof text, "%.3f s", ps / 1e12);
  } else if (ps >= 1e9) {
    std::snprintf(text, sizeof text, "%.3f ms", ps / 1e9);
  } else if (ps >= 1e6) {
    std::snprintf(text, sizeof text, "%.3f us", ps / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.3f ns", ps / 1e3);
  }
  return text;
}

std::string FormatBytes(uint64_t bytes) {
  // The largest binary unit the size reaches, so a size reads like "14.9 GiB", never
  // "1.526e+04 MiB"; exact multiples show no fraction ("16 MiB").
  char text[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ull << 30)) {
    std::snprintf(text, sizeof text, "%.4g GiB", b / (1ull << 30));
  } else if (bytes >= (1ull << 20)) {
    std::snprintf(text, sizeof text, "%.4g MiB", b / (1ull << 20));
  } else if (bytes >= (1ull << 10)) {
    std::snprintf(text, sizeof text, "%.4g KiB", b / (1ull << 10));
  } else {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

}  // namespace tpusim::base
