#include "tools/tpusim/cli.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "kernels/params.h"

namespace tpusim::cli {

namespace {
bool parse_only = false;
}  // namespace

void SetParseOnly(bool value) {
  parse_only = value;
}
bool ParseOnly() {
  return parse_only;
}

uint64_t ParseBytes(const std::string& command, const std::string& option,
                    const std::string& text) {
  bool overflow = false;
  if (const auto bytes = kernels::ParseByteSize(text, &overflow)) return *bytes;
  if (overflow) {
    throw UsageError(command, option + " '" + text + "' is more bytes than a 64-bit count holds.");
  }
  throw UsageError(command, option + " '" + text +
                                "' is not a size; write bytes as a number with an optional "
                                "K, M or G suffix (powers of 1024), e.g. 16M.");
}

uint64_t ParseTimeLimit(const std::string& command, double seconds) {
  if (!(seconds > 0) || !(seconds <= kMaxTimeLimitSeconds)) {  // also refuses NaN and inf
    std::ostringstream text;
    text << "--time-limit " << seconds << " is out of range: give a number of simulated seconds "
         << "greater than 0 and at most " << kMaxTimeLimitSeconds
         << " (simulated time is counted in 64-bit picoseconds).";
    throw UsageError(command, text.str());
  }
  return static_cast<uint64_t>(std::llround(seconds * 1e12));
}

void PrepareTraceDirectory(const std::string& command, const std::string& dir) {
  std::error_code error;
  const auto status = std::filesystem::status(dir, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_directory(status)) {
    throw UsageError(command, "--trace-dir '" + dir +
                                  "' exists and is not a directory; name a directory (it is "
                                  "created when missing) or remove the file.");
  }
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw UsageError(command, "--trace-dir '" + dir + "' cannot be created: " + error.message() +
                                  "; name a directory you can write to.");
  }
}

std::string HumanBytes(uint64_t bytes) {
  return kernels::HumanBytes(bytes);
}

std::string HumanSeconds(double seconds) {
  char text[64];
  if (seconds >= 1) {
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  } else if (seconds >= 1e-6) {
    std::snprintf(text, sizeof text, "%.3f us", seconds * 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.3f ns", seconds * 1e9);
  }
  return text;
}

std::string FormatNumber(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string HumanRate(double bytes_per_second) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f GB/s", bytes_per_second / 1e9);
  return text;
}

}  // namespace tpusim::cli
