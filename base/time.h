#pragma once

// Simulated time is integer picoseconds; every duration is computed once from bytes and a
// bandwidth or from cycles and a clock, never accumulated from ticks.

#include <cmath>
#include <cstdint>
#include <string>

namespace tpusim::base {

using Picoseconds = uint64_t;

inline Picoseconds TransferTime(uint64_t bytes, double bytes_per_second) {
  return static_cast<Picoseconds>(
      std::llround(static_cast<double>(bytes) * 1e12 / bytes_per_second));
}

inline Picoseconds CyclesToTime(uint64_t cycles, double clock_hz) {
  return static_cast<Picoseconds>(std::llround(static_cast<double>(cycles) * 1e12 / clock_hz));
}

inline Picoseconds NanosecondsToTime(double ns) {
  return static_cast<Picoseconds>(std::llround(ns * 1e3));
}

// "12.345 us", choosing the unit by magnitude.
std::string FormatTime(Picoseconds t);
std::string FormatBytes(uint64_t bytes);

}  // namespace tpusim::base
