#pragma once

// bench's one spelling of a sweep, --sweep PARAM=FROM:TO[:xF], over a problem parameter
// of kernels::CollectiveArgs (bytes, m, k or n).

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace tpusim::cli {

// The swept parameter: which CollectiveArgs field it sets, and the entry column's width
// (0: one entry, no column).
struct Sweep {
  std::string param = "bytes";
  uint64_t from = 0, to = 0, factor = 2;
  int entry_width = 0;

  void Set(kernels::CollectiveArgs& args, uint64_t value) const {
    if (param == "bytes") args.bytes = value;
    if (param == "m") args.m = static_cast<int64_t>(value);
    if (param == "k") args.k = static_cast<int64_t>(value);
    if (param == "n") args.n = static_cast<int64_t>(value);
  }
  std::vector<uint64_t> Values() const;  // from, from*factor, ... up to `to`
};

// "m=256:16384:x2". Throws UsageError naming the part that is wrong.
Sweep ParseSweep(const std::string& text);
// Throws UsageError, with the options' names, for an empty, reversed or non-growing sweep.
void CheckSweep(const Sweep& sweep, const std::string& from_name, const std::string& to_name,
                const std::string& factor_name);

}  // namespace tpusim::cli
