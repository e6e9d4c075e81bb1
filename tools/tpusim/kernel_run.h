#pragma once

// Runs one registry entry (a kernel or a program) on one slice and gathers what every
// subcommand reports: simulated time, bandwidths, the analytic bound, bytes over ICI, peak
// HBM, the data check and the trace path.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/engine.h"
#include "dsl/program/runtime.h"
#include "kernels/registry.h"
#include "topologies/topology.pb.h"

namespace tpusim::cli {

// The checks of Pallas interpret mode that `run` and `compare` take as flags
// (docs/references.md §5): --no-race-check, --uninitialized-memory nan|zero,
// --out-of-bounds-reads raise|uninitialized, --grid-seed N (tools/tpusim/common_options.cc).
struct InterpretChecks {
  bool race_check = true;
  dsl::UninitializedMemory uninitialized_memory = dsl::UninitializedMemory::kNan;
  dsl::OutOfBoundsReads out_of_bounds_reads = dsl::OutOfBoundsReads::kRaise;
  std::optional<uint64_t> grid_seed;

  static void AddOptions(boost::program_options::options_description& options);
  // Throws UsageError naming `command` for a bad value.
  static InterpretChecks Parse(const std::string& command,
                               const boost::program_options::variables_map& vm);
  // As the report's "checks": {"race_check": true, "uninitialized_memory": "nan", ...}.
  nlohmann::ordered_json ToJson() const;
};

struct KernelRunRequest {
  std::string kernel;
  config::Topology topology;
  // The entry's parameters as given (text from the command line); RunKernel checks them
  // against its declarations and fills in the defaults.
  kernels::ParamValues params;
  bool functional = true;  // false: timing only, no payload
  std::string trace_path;  // empty: no trace
  base::Picoseconds time_limit = 60'000'000'000'000ull;
  InterpretChecks checks;
  // The algorithm every lax collective that implements it runs (kernels/lax/algorithm.h);
  // empty: each chooses its own.
  std::string collective_algorithm;
};

struct KernelRunReport {
  std::string kernel;
  std::string kind;  // "kernel" or "program"
  std::string topology;
  uint64_t chips = 0;
  std::string axis;
  int axis_size = 0;
  bool wraparound = false;
  uint64_t bytes = 0;
  std::string dtype;
  bool functional = true;
  InterpretChecks checks;  // how a functional run was checked

  bool completed = false;  // the simulation ran to the end without an error
  std::optional<ErrorKind> error_kind;
  std::string error;
  bool checked = false;  // data was compared (functional runs)
  bool correct = false;
  std::string mismatch;

  double sim_seconds = 0;
  double bound_seconds = 0;
  std::string bound_formula;
  // V / T and algbw x the bus factor, for entries that move an array of V bytes (the
  // parameter bytes) over an axis and declare a bus factor (the collectives); `bandwidths`
  // is false for the others (matmuls, programs sized by m, k, n), whose ICI bytes per chip
  // say what moved.
  bool bandwidths = false;
  double algbw = 0;
  double busbw = 0;
  double wall_seconds = 0;
  uint64_t events = 0;
  std::string trace_path;
  base::RunStats stats;   // per-core blocked/MXU time, per-link busy time
  std::string contract;   // inputs, specs and outputs: what the kernel computes
  std::string specs;      // its PartitionSpecs alone: "P('x', None), P() -> P('x', None)"
  std::string out_dtype;  // the outputs' element types, e.g. "bf16" or "f32, bf16"
  // Bytes each chip's outbound ICI links carried (forwarded hops included), mean over
  // chips; and the most HBM one chip's arrays held at once, max over chips.
  double ici_bytes_per_chip = 0;
  uint64_t peak_hbm_bytes = 0;
  // Programs: time the cores waited in async collectives' *_done, mean over chips.
  double async_wait_seconds = 0;

  // A functional run was asked for, but the entry cannot be one (an op without numerics):
  // the run was timing-only, for this reason.
  std::string timing_only_reason;
  std::vector<std::string> notes;  // what the entry says about this run
  // Programs: the per-op table of the device whose program ended last.
  std::vector<dsl::OpTime> ops;
  // Programs: their lax collectives (algorithm, where the time went), and the algorithm the
  // run forced on them ("auto": none).
  std::vector<dsl::CollectiveRecord> collectives;
  std::string collective_algorithm = "auto";
  int critical_device = 0;

  // The entry's parameters as the run used them, defaults included.
  std::vector<std::pair<std::string, kernels::ParamValue>> params;

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

// What an entry computes: its global input types and PartitionSpecs, and its global
// outputs' shapes, specs and dtypes. Schedules compared side by side must compute the same
// global problem: the same input types and output shapes (output dtypes may differ:
// accumulating in f32 or bf16 is a schedule's choice). Kernels must also agree on the
// PartitionSpecs (a kernel's blocks are its layout); a program's specs are a schedule's
// choice like any other (mlp/dp and mlp/tp lay the same problem out differently), so
// programs must instead agree on the host reference (tools/tpusim/cmd_compare.cc).
struct Contract {
  std::vector<std::string> in_types;    // "bf16[2048,2048]", one per input
  std::vector<std::string> in_specs;    // "P('x', 'y')", one per input
  std::vector<std::string> out_shapes;  // "[2048,1024]", one per output
  std::vector<std::string> out_specs;   // "P('x', None)", one per output
  std::vector<std::string> out_dtypes;  // "bf16", one per output

  // The global problem: "(bf16[2048,2048], bf16[1024,1024]) -> ([2048,1024])".
  std::string Problem() const { return Format(false, false); }
  // The layout: "P('x', 'y'), P('x', None) -> P('x', None)".
  std::string Specs() const;
  // Both: "(bf16[2048,2048] P('x', 'y'), ...) -> ([2048,1024] P('x', None))".
  std::string Shapes() const { return Format(true, false); }
  // All of it: "(bf16[2048,2048] P('x', 'y')) -> (bf16[2048,1024] P('x', None))".
  std::string Describe() const { return Format(true, true); }
  std::string OutDtypes() const;  // "bf16" or "f32, bf16"
  std::string Format(bool with_specs, bool with_out_dtypes) const;
};
// Empty when a program's outputs are unknown before it runs (no Workload::out_types, and
// no reference outputs because the workload is not functional).
std::optional<Contract> WorkloadContract(const kernels::Workload& workload);
// The contract of entry `info` for `params`: from a shapes-only workload when it tells,
// otherwise from a functional one (whose reference outputs give a program's outputs).
Contract EntryContract(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                       const kernels::Params& params);
// The entry's workload without payload (placeholder inputs, no reference), checked as a
// run first checks it (dsl::ShardMap::Check: the specs and BlockSpecs): cheap at any size.
kernels::Workload ShapesOnlyWorkload(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                                     const kernels::Params& params);
// The workload a run with `params` uses. A functional one is refused before it is built
// when it would not fit the host's memory (tools/tpusim/run_memory.h), and checked again
// once built.
kernels::Workload MakeWorkload(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                               const kernels::Params& params);
// info.make(mesh, params), with a ParamError it throws tied to the entry: its message
// starts with the entry's name and its hint names the entry's --help.
kernels::Workload MakeEntryWorkload(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                                    const kernels::Params& params);
// The registry entry called `name`; throws UsageError for `command` listing the known
// entries (and families) when there is none.
const kernels::KernelInfo& FindEntry(const std::string& command, const std::string& name);

// Throws Error / UsageError for bad arguments; failures during the run are in the report.
KernelRunReport RunKernel(const KernelRunRequest& request);

}  // namespace tpusim::cli
