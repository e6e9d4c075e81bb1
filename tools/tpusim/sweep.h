#pragma once

// bench's one spelling of a sweep, --sweep PARAM=FROM:TO[:xF], over an int or bytes
// parameter that every benched entry declares (bytes, m, chunk_bytes, ...).

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace tpusim::cli {

// The swept parameter, its values, and the entry column's width (0: one entry, no column).
struct Sweep {
  std::string param = "bytes";
  uint64_t from = 0, to = 0, factor = 2;
  int entry_width = 0;

  std::vector<uint64_t> Values() const;  // from, from*factor, ... up to `to`
};

// "m=256:16384:x2". Throws UsageError naming the part that is wrong.
Sweep ParseSweep(const std::string& text);
// Throws UsageError unless every entry declares sweep.param as an int or bytes parameter.
void CheckSweptParam(const Sweep& sweep, const std::vector<const kernels::KernelInfo*>& entries);
// Throws UsageError, with the options' names, for an empty, reversed or non-growing sweep.
void CheckSweep(const Sweep& sweep, const std::string& from_name, const std::string& to_name,
                const std::string& factor_name);

}  // namespace tpusim::cli
