#pragma once

// How a swept parameter's values are written, for `sweep --param` and `bench --sweep`
// alike: NAME=V1,V2,... lists them (NAME=V1;V2 when the values hold commas, as an HLO
// module's device_order does), NAME=FROM:TO[:xF] is the geometric range FROM,
// FROM*F, FROM*F^2, ... up to TO (F: 2 unless given). FROM and TO are integers with an
// optional K, M or G suffix (powers of 1024; F then an integer of at least 2), or plain
// numbers (1e-6:1e-3:x10; F then any number above 1).

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::cli {

struct SweepAxis {
  std::string name;                 // as written, '-' read as '_': chunks_in_flight
  std::vector<std::string> values;  // in order; a range's as plain numbers
  bool range = false;               // written FROM:TO[:xF]
};

// Throws UsageError for `command`, naming `option` ("--param", "--sweep") and the fix:
// no '=', no name, an empty value, a factor not written xF or too small, FROM above TO,
// FROM not positive, a range of more than 100000 values.
SweepAxis ParseSweepAxis(const std::string& command, const std::string& option,
                         const std::string& text);

}  // namespace tpusim::cli
