#pragma once

// The options run, compare, bench and bench matmul share, declared once so that their
// names, defaults and help texts agree; each command picks the groups it takes.

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/tpusim/kernel_run.h"

namespace tpusim::cli {

enum OptionGroup : unsigned {
  kTopologyOption = 1u << 0,  // --topology
  kAxisOptions = 1u << 1,     // --axis, --axis2
  kBytesOption = 1u << 2,     // --bytes
  kProblemOptions = 1u << 3,  // --m, --k, --n
  kBlockOptions = 1u << 4,    // --bm, --bk, --bn
  kNumericOptions = 1u << 5,  // --dtype, --precision
  kRunOptions = 1u << 6,      // --timing-only, --time-limit
  kCheckOptions = 1u << 7,    // --no-race-check, --uninitialized-memory, --grid-seed
  kLoadOption = 1u << 8,      // --load (Main takes it out of argv; listed for --help)
  kAllCommonOptions = (1u << 9) - 1,
};

class CommonOptions {
 public:
  void Add(boost::program_options::options_description& options, unsigned groups);
  // The run these options describe: topology loaded, sizes parsed and checked. Throws
  // UsageError naming `command` for a bad value.
  KernelRunRequest Request(const std::string& command,
                           const boost::program_options::variables_map& vm) const;
  const std::string& topology() const { return topology_; }

 private:
  unsigned groups_ = 0;
  std::string topology_, axis_ = "x", axis2_, bytes_, dtype_ = "bf16", precision_ = "DEFAULT";
  int64_t m_ = 0, k_ = 0, n_ = 0, bm_ = 0, bk_ = 0, bn_ = 0;
  double time_limit_s_ = 60;
};

// Parses `argv` (argv[0] is the command) against `options` plus --help, with up to
// `max_entries` positional entry names (-1: any number) returned in `entries`. Returns
// false after printing `options` for --help. Throws UsageError for a bad command line.
bool ParseCommandLine(const std::string& command, int argc, char** argv,
                      boost::program_options::options_description& options, int max_entries,
                      std::vector<std::string>& entries, boost::program_options::variables_map& vm);

}  // namespace tpusim::cli
