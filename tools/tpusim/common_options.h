#pragma once

// The options run, compare, bench and bench matmul share, declared once so that their
// names, defaults and help texts agree; each command picks the groups it takes. The
// problem's parameters (--bytes, --m, --dtype, a kernel's own) are not among them: each
// entry declares its own, and tools/tpusim/param_flags.h makes their flags.

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/param_flags.h"

namespace tpusim::cli {

enum OptionGroup : unsigned {
  kTopologyOption = 1u << 0,  // --topology, --slices
  // --timing-only, --time-limit, --wall-limit, --collective-algorithm, --slow-chip,
  // --slow-link
  kRunOptions = 1u << 1,
  // --no-race-check, --uninitialized-memory, --out-of-bounds-reads, --grid-seed
  kCheckOptions = 1u << 2,
  kLoadOption = 1u << 3,  // --load (Main takes it out of argv; listed for --help)
  kAllCommonOptions = (1u << 4) - 1,
  // --slices, --slow-chip and --slow-link alone, for a command that takes its topology its
  // own way and runs nothing (describe): the slice those options make.
  kSliceOptions = 1u << 4,
};

class CommonOptions {
 public:
  void Add(boost::program_options::options_description& options, unsigned groups);
  // The run these options describe: topology loaded, run options checked into its
  // RunConfig; no entry and no parameters yet. Throws UsageError naming `command` for a
  // bad value.
  // `slice`: the topology to check chip and link names against when the options have no
  // --topology (kTopologyOption) of their own; null: syntax only (slow_options.h).
  KernelRunRequest Request(const std::string& command,
                           const boost::program_options::variables_map& vm,
                           const config::Topology* slice = nullptr) const;
  const std::string& topology() const { return topology_; }
  // The topology `name` loads, as --slices joins copies of it (kTopologyOption or
  // kSliceOptions). Throws TopologyError as topologies::WithSlices does.
  config::Topology Slice(const std::string& name,
                         const boost::program_options::variables_map& vm) const;
  // --slow-chip and --slow-link into `config`, chips and links checked against `topology`
  // (slow_options.h; null: syntax only). Throws UsageError naming `command`.
  void Slowdowns(const std::string& command, const config::Topology* topology,
                 base::RunConfig& config) const;
  // The run options (kRunOptions and kCheckOptions) the command line set, as the
  // arguments that set them again ("--timing-only", "--time-limit=2"): what a run in a
  // child process is given.
  std::vector<std::string> RunFlags(const boost::program_options::variables_map& vm) const;

 private:
  unsigned groups_ = 0;
  std::string topology_;
  uint32_t slices_ = 0;  // --slices; 0: as the topology says
  double time_limit_s_ = 60;
  double wall_limit_s_ = 300;
  std::string collective_algorithm_ = "auto";
  std::string slow_chip_;  // "3=2,5=1.5"
  std::string slow_link_;  // "0,1:x+=4"
};

// A run option as a sweep names it: the flag without its dashes, '-' spelled '_'
// (time_limit), and whether the flag takes a value (--time-limit 2) or stands alone
// (--timing-only: swept as true or false).
struct RunOptionName {
  std::string name;
  std::string flag;  // "--time-limit"
  bool takes_value = true;
};
// Every run option (kRunOptions and kCheckOptions), in --help order.
std::vector<RunOptionName> RunOptionNames();
// The RunConfig that `flags` (run options only, e.g. {"--time-limit=2"}) give, checked
// as a command checks them, chips and links against `topology` when given (without it,
// --slow-chip and --slow-link are checked for syntax only, slow_options.h). Throws
// UsageError naming `command`.
base::RunConfig ParseRunFlags(const std::string& command, const std::vector<std::string>& flags,
                              const config::Topology* topology = nullptr);

// Parses `argv` (argv[0] is the command) against `options` plus --help and the flags of
// every entry's parameters (`params`), with up to `max_entries` positional entry names (-1:
// any number) returned in `entries`. For --help prints `options` and the parameters of the
// named entries (families stand for their members), and returns false. Throws UsageError
// for a bad command line.
bool ParseCommandLine(const std::string& command, int argc, char** argv,
                      boost::program_options::options_description& options, int max_entries,
                      std::vector<std::string>& entries, boost::program_options::variables_map& vm,
                      const ParamFlags& params);
// The same for a command that runs no registry entry (check-trace): no parameter flags,
// and the positional arguments (`operands`) are not entry names.
bool ParseCommandLine(const std::string& command, int argc, char** argv,
                      boost::program_options::options_description& options, int max_operands,
                      std::vector<std::string>& operands,
                      boost::program_options::variables_map& vm);
// The one argument a command takes either as an operand or as --OPTION (describe's
// topology, hlo-info's file); "" when neither is given. Throws UsageError when both are.
std::string OperandOrOption(const std::string& command, const std::vector<std::string>& operands,
                            const boost::program_options::variables_map& vm,
                            const std::string& option);
// The registry entries `names` stand for, families expanded; throws UsageError for an
// unknown one.
std::vector<const kernels::KernelInfo*> EntriesNamed(const std::string& command,
                                                     const std::vector<std::string>& names);

}  // namespace tpusim::cli
