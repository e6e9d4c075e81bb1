#include "tools/tpusim/sweep_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>

#include "kernels/params.h"
#include "tools/tpusim/cli.h"

namespace tpusim::cli {

namespace {

constexpr size_t kMaxRangeValues = 100000;

std::optional<double> Number(const std::string& text) {
  std::istringstream in(text);
  double value = 0;
  if (text.empty() || !(in >> value) || !in.eof() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The shortest text that is `value` up to rounding: a range's FROM x F^i is not exact in
// binary, and 1e-05 reads better than 9.999999999999999e-06.
std::string PlainNumber(double value) {
  char text[32];
  for (int digits = 1; digits <= 15; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::fabs(std::strtod(text, nullptr) - value) <= 1e-12 * std::fabs(value)) return text;
  }
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

SweepAxis ParseSweepAxis(const std::string& command, const std::string& option,
                         const std::string& text) {
  const std::string how =
      "; write NAME=V1,V2,... or NAME=FROM:TO[:xF], e.g. " + option + " bytes=4K:1G:x4.";
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0)
    throw UsageError(command, option + " '" + text + "' names no parameter" + how);
  SweepAxis axis;
  axis.name = text.substr(0, equals);
  std::replace(axis.name.begin(), axis.name.end(), '-', '_');
  const std::string values = text.substr(equals + 1);
  const std::string named = option + " " + axis.name;
  // A range's ends are numbers, so values holding an '=' (--slow-link's CHIP:DIRECTION=F)
  // are a list even with a ':'.
  if (values.find(':') == std::string::npos || values.find('=') != std::string::npos) {
    // Values that hold commas themselves (an HLO module's device_order) are separated by
    // semicolons instead.
    const char separator = values.find(';') == std::string::npos ? ',' : ';';
    std::istringstream list(values + separator);
    for (std::string value; std::getline(list, value, separator);) {
      if (value.empty()) {
        throw UsageError(command, named + " has an empty value in '" + values +
                                      "'; give a value between every two separators" + how);
      }
      axis.values.push_back(value);
    }
    return axis;
  }

  axis.range = true;
  std::vector<std::string> parts;
  std::istringstream range(values + ":");
  for (std::string part; std::getline(range, part, ':');)
    parts.push_back(part);
  if (parts.size() > 3 || parts[0].empty() || parts[1].empty())
    throw UsageError(command, named + " range '" + values + "' is not FROM:TO[:xF]" + how);
  std::string factor_text = "2";
  if (parts.size() == 3) {
    if (parts[2].size() < 2 || parts[2][0] != 'x')
      throw UsageError(command, named + " range '" + values + "': the factor is written xF" + how);
    factor_text = parts[2].substr(1);
  }
  const auto from_bytes = kernels::ParseByteSize(parts[0]);
  const auto to_bytes = kernels::ParseByteSize(parts[1]);
  const auto factor_int = kernels::ParseByteSize(factor_text);
  if (from_bytes && to_bytes) {
    if (*from_bytes == 0) throw UsageError(command, named + " FROM must be at least 1.");
    if (*from_bytes > *to_bytes) {
      throw UsageError(command, named + " FROM is above TO (" + values +
                                    "), so the range is empty; the values run from the smaller "
                                    "to the larger.");
    }
    if (!factor_int || *factor_int < 2) {
      throw UsageError(command, option +
                                    "'s factor must be an integer of at least 2 (each value "
                                    "is the previous one times the factor), not '" +
                                    factor_text + "'.");
    }
    for (uint64_t v = *from_bytes; v <= *to_bytes;) {
      axis.values.push_back(std::to_string(v));
      if (v > std::numeric_limits<uint64_t>::max() / *factor_int) break;
      v *= *factor_int;
    }
  } else {
    const auto from = Number(parts[0]), to = Number(parts[1]), factor = Number(factor_text);
    if (!from || !to) {
      throw UsageError(command, named + " range '" + values +
                                    "': FROM and TO must be numbers or sizes (4K, 16M)" + how);
    }
    if (!(*from > 0)) throw UsageError(command, named + " FROM must be above 0.");
    if (*from > *to) {
      throw UsageError(command, named + " FROM is above TO (" + values +
                                    "), so the range is empty; the values run from the smaller "
                                    "to the larger.");
    }
    if (!factor || !(*factor > 1)) {
      throw UsageError(command,
                       option + "'s factor must be a number above 1, not '" + factor_text + "'.");
    }
    // A relative slack, so 1e-6:1e-3:x10 ends at 1e-3 despite rounding.
    // Counted first: a factor barely above 1 must not make a million values to refuse.
    if (std::log(*to / *from) / std::log(*factor) > static_cast<double>(kMaxRangeValues)) {
      throw UsageError(command, named + " range '" + values + "' has more than " +
                                    std::to_string(kMaxRangeValues) +
                                    " values; choose a larger factor.");
    }
    for (int i = 0;; ++i) {
      const double v = *from * std::pow(*factor, i);
      if (v > *to * (1 + 1e-9) || axis.values.size() > kMaxRangeValues) break;
      axis.values.push_back(PlainNumber(v));
    }
  }
  if (axis.values.size() > kMaxRangeValues) {
    throw UsageError(command, named + " range '" + values + "' has more than " +
                                  std::to_string(kMaxRangeValues) +
                                  " values; choose a larger factor.");
  }
  return axis;
}

}  // namespace tpusim::cli
