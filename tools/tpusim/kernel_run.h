#pragma once

// Runs one registry entry (a kernel or a program) on one slice and gathers what every
// subcommand reports: simulated time, bandwidths, the analytic bound, bytes over ICI, peak
// HBM, the data check and the trace path.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/run_config.h"
#include "dsl/program/runtime.h"
#include "kernels/registry.h"
#include "tools/tpusim/run_metrics.h"
#include "topologies/topology.pb.h"

namespace tpusim::cli {

struct KernelRunRequest {
  std::string kernel;
  config::Topology topology;
  // The entry's parameters as given (text from the command line); RunKernel checks them
  // against its declarations and fills in the defaults.
  kernels::ParamValues params;
  // How the run goes (tools/tpusim/common_options.h parses it from the flags); its trace
  // is opened from trace_path.
  base::RunConfig config;
  std::string trace_path;  // empty: no trace
  // The caller's inputs instead of the entry's own (empty: the entry's), one per entry
  // input: the global array alone, or one block per device, assembled as the input's
  // PartitionSpec says. A floating input of another float type is rounded to the entry's.
  // The entry's host reference is for its own inputs, so the data is then not checked.
  std::vector<std::vector<dsl::Array>> inputs;
  bool keep_outputs = false;  // fill KernelRunReport::outputs (functional runs)
  // A failure's message names the flag that changes it ("(flag --time-limit)"); the Python
  // module, whose callers set keyword arguments, turns this off.
  bool name_flags = true;
};

// The interpret-mode checks a run followed, as the report's "checks": {"race_check": true,
// "uninitialized_memory": "nan", "out_of_bounds_reads": "raise", "grid_seed": null}.
nlohmann::ordered_json ChecksJson(const base::RunConfig& config);

// "8 chips", or "9216 chips, 18432 devices" on chips of chiplets.
std::string SizeText(uint64_t chips, uint64_t devices);

struct KernelRunReport {
  std::string kernel;
  std::string kind;  // "kernel" or "program"
  std::string topology;
  uint64_t chips = 0;    // physical chips
  uint64_t devices = 0;  // the mesh's devices: the chips, or their chiplets (TPU7x)
  // What a device is, as headers say it: "chips", or "devices" on chips of chiplets
  // (TPU7x, config::ChipletConfig), where the mesh counts devices.
  std::string devices_word = "chips";
  // "8 chips", or "9216 chips, 18432 devices" on chips of chiplets.
  std::string SizeText() const;
  std::string axis;
  int axis_size = 0;
  bool wraparound = false;
  uint64_t bytes = 0;
  std::string dtype;
  // The run's options; functional is false when the run was timing-only, whether asked
  // for or not (timing_only_reason).
  base::RunConfig config;

  bool completed = false;  // the simulation ran to the end without an error
  std::optional<ErrorKind> error_kind;
  std::string error;
  std::string mismatch;  // where a checked run's data differs from the reference

  RunMetrics metrics;  // everything measured, computed once (tools/tpusim/run_metrics.h)
  std::string bound_formula;
  std::string busiest_link;  // the most loaded link direction's name
  std::string trace_path;
  std::string contract;   // inputs, specs and outputs: what the kernel computes
  std::string specs;      // its PartitionSpecs alone: "P('x', None), P() -> P('x', None)"
  std::string out_dtype;  // the outputs' element types, e.g. "bf16" or "f32, bf16"

  // A functional run was asked for, but the entry cannot be one (an op without numerics):
  // the run was timing-only, for this reason.
  std::string timing_only_reason;
  std::vector<std::string> notes;  // what the entry says about this run
  // Programs: the per-op table of the device whose program ended last.
  std::vector<dsl::OpTime> ops;
  // Programs: their lax collectives (algorithm, where the time went); the algorithm the run
  // forced on them is config.collective_algorithm.
  std::vector<dsl::CollectiveRecord> collectives;
  int critical_device = 0;
  // With KernelRunRequest::keep_outputs, a functional run's outputs: global, and per
  // device ([output][device]).
  std::vector<dsl::Array> outputs;
  std::vector<std::vector<dsl::Array>> device_outputs;

  // The entry's parameters as the run used them, defaults included.
  std::vector<std::pair<std::string, kernels::ParamValue>> params;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> blocks;  // a compute kernel's roofline blocking, e.g. (bm, bk, bn)

  bool functional() const { return config.functional; }
  bool correct() const { return metrics.correct.value_or(0) != 0; }
  bool ok() const { return completed && (!functional() || correct()); }
  double sim_seconds() const { return metrics.sim_seconds.value_or(0); }
  // Compute kernels judged against a roofline (kernels::Bound::peak_flops > 0).
  bool roofline() const { return metrics.peak_flops.has_value(); }
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
