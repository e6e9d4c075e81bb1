#include "sim/parameters.h"

#include <cstdio>

namespace tpusim::sim {

namespace {
std::string Scaled(double value, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  size_t prefix = 0;
  while (value >= 1000 && prefix + 1 < std::size(kPrefixes)) {
    value /= 1000;
    ++prefix;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.4g %s%s", value, kPrefixes[prefix], unit);
  return text;
}
}  // namespace

std::string FormatRate(double bytes_per_second) {
  return Scaled(bytes_per_second, "B/s");
}
std::string FormatHertz(double hertz) {
  return Scaled(hertz, "Hz");
}
std::string FormatCount(uint64_t n) {
  return std::to_string(n);
}
std::string FormatNumber(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

}  // namespace tpusim::sim
