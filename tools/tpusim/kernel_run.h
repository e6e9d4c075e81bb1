#pragma once

// Runs one registered kernel on one slice and gathers what every subcommand reports:
// simulated time, bandwidths, the analytic bound, the data check and the trace path.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kernels/registry.h"
#include "sim/system.h"
#include "topologies/topology.pb.h"

namespace tpusim::cli {

// The checks of Pallas interpret mode that `run` and `compare` take as flags
// (docs/references.md §5): --no-race-check, --uninitialized-memory nan|zero, --grid-seed N.
struct InterpretChecks {
  bool race_check = true;
  dsl::UninitializedMemory uninitialized_memory = dsl::UninitializedMemory::kNan;
  std::optional<uint64_t> grid_seed;

  static void AddOptions(boost::program_options::options_description& options);
  // Throws UsageError naming `command` for a bad value.
  static InterpretChecks Parse(const std::string& command,
                               const boost::program_options::variables_map& vm);
};

struct KernelRunRequest {
  std::string kernel;
  config::Topology topology;
  kernels::CollectiveArgs args;
  std::string trace_path;  // empty: no trace
  sim::Picoseconds time_limit = 60'000'000'000'000ull;
  InterpretChecks checks;
};

struct KernelRunReport {
  std::string kernel;
  std::string topology;
  uint64_t chips = 0;
  std::string axis;
  int axis_size = 0;
  bool wraparound = false;
  uint64_t bytes = 0;
  std::string dtype;
  bool functional = true;

  bool completed = false;  // the simulation ran to the end without an error
  std::optional<ErrorKind> error_kind;
  std::string error;
  bool checked = false;  // data was compared (functional runs)
  bool correct = false;
  std::string mismatch;

  double sim_seconds = 0;
  double bound_seconds = 0;
  std::string bound_formula;
  double algbw = 0;  // V / T
  double busbw = 0;
  double wall_seconds = 0;
  uint64_t events = 0;
  std::string trace_path;
  sim::RunStats stats;   // per-core blocked/MXU time, per-link busy time
  std::string contract;  // inputs, specs and outputs: what the kernel computes

  // Compute kernels with a roofline bound (kernels::Bound::peak_flops > 0), per chip.
  bool roofline = false;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> blocks;  // e.g. (bm, bk, bn)
  double flops = 0;
  double peak_flops = 0;
  double hbm_bytes = 0;
  double achieved_flops = 0;   // flops / simulated time
  double mxu_utilisation = 0;  // MXU busy / simulated time, mean over chips

  bool ok() const { return completed && (!functional || correct); }
  double percent_of_bound() const {
    return sim_seconds > 0 ? 100 * bound_seconds / sim_seconds : 0;
  }
  nlohmann::ordered_json ToJson() const;
};

// What a kernel computes, as its global input types, PartitionSpecs and output blocks;
// kernels compared side by side must agree on it.
std::string ShardingContract(const dsl::ShardMap& program, const std::vector<dsl::Array>& inputs);

// Throws Error / UsageError for bad arguments; failures during the run are in the report.
KernelRunReport RunKernel(const KernelRunRequest& request);

}  // namespace tpusim::cli
