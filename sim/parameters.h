#pragma once

// What a module of the tree tells `tpusim describe` about itself: its parameters, each
// with its value and unit, as the model uses them (after the topology's overrides).

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::sim {

struct Parameter {
  std::string name;
  std::string value;  // with its unit: "819 GB/s", "1.000 us", "16 GiB"
};

class Described {
 public:
  virtual ~Described() = default;
  virtual std::vector<Parameter> parameters() const = 0;
};

std::string FormatRate(double bytes_per_second);  // "45 GB/s"
std::string FormatHertz(double hertz);            // "1.5 GHz"
std::string FormatCount(uint64_t n);              // "8"
std::string FormatNumber(double x);               // "500", "0.92"

}  // namespace tpusim::sim
