#pragma once

// shard_map over a program body (dsl/program/context.h) or a single pallas_call: splits
// global inputs into per-device blocks by their PartitionSpecs, runs the body on every
// device of the mesh on one simulated timeline, and assembles the outputs. A run gives
// the data, the timing, each chip's peak HBM and (optionally) one trace. A single
// pallas_call is the program with one pallas_call step, and times exactly as that kernel.

#include <optional>
#include <string>
#include <vector>

#include "base/engine.h"
#include "base/errors.h"
#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "dsl/program/context.h"
#include "dsl/program/runtime.h"
#include "traces/trace_sink.h"

namespace tpusim::dsl {

// A run's options: one base::RunConfig, handed by reference to the model and to every
// pallas_call of the run (base/run_config.h). The DSL's names for it and its enums:
using RunOptions = base::RunConfig;
using UninitializedMemory = base::UninitializedMemory;
using OutOfBoundsReads = base::OutOfBoundsReads;

// The engine's outcome (ok, error, stats) and what the program left behind.
struct RunResult : base::RunOutcome {
  std::vector<Array> outputs;                      // global, assembled (functional runs)
  std::vector<std::vector<Array>> device_outputs;  // [output][device] (functional runs)
  // Per chip: the most HBM the program's arrays held at once (inputs, outputs and
  // temporaries over their live ranges).
  std::vector<uint64_t> peak_hbm_bytes;
  // Per chip: the time the core waited for async collectives in their *_done (their
  // exposed communication).
  std::vector<base::Picoseconds> async_wait;
  // The per-op table of the device whose program ended last (the critical one).
  std::vector<OpTime> op_times;
  // Its lax collectives: algorithm and where their time went.
  std::vector<CollectiveRecord> collectives;
  int critical_device = 0;

  base::Picoseconds time() const { return stats.end_time; }
};

class ShardMap {
 public:
  ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
           PallasCall call);
  ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
           ProgramBody body, std::string name = "program");

  const Mesh& mesh() const { return mesh_; }
  const std::string& name() const { return name_; }
  // A shard_map over one pallas_call (a kernel), as opposed to a program body.
  bool is_kernel() const { return call_.has_value(); }
  // The kernel's pallas_call; throws Error(kInvalidArgument) for a program body.
  const PallasCall& call() const;
  const std::vector<PartitionSpec>& in_specs() const { return in_specs_; }
  const std::vector<PartitionSpec>& out_specs() const { return out_specs_; }

  // Throws Error(kInvalidArgument) for inputs that do not match the specs; every failure
  // during the simulation is reported in the result instead.
  RunResult Run(const std::vector<Array>& inputs, const base::RunConfig& config) const;
  // What Run checks before it builds anything: the inputs against the specs and, for a
  // kernel, every BlockSpec against its operand. Throws Error(kInvalidArgument). Cheap for
  // any size (placeholders will do): it allocates no payload and simulates nothing.
  void Check(const std::vector<Array>& inputs) const;

  // The block of `global` that output `index` of `device` should hold.
  Array ExpectedBlock(int output, const Array& global, int device) const;
  // Device `device`'s block of input `input`, as Run hands it to the body.
  Array InputBlock(int input, const Array& global, int device) const;
  // Output `output` assembled from every device's block (the canonical replicas' blocks).
  Array AssembleOutput(int output, const std::vector<Array>& blocks) const;

 private:
  void CheckSpecAxes() const;
  std::string InputName(size_t i) const;
  std::string OutputName(size_t i) const;  // "output 0 ('out')"
  // Each input's per-device block; throws for a wrong count or a spec that does not split.
  std::vector<ShapeDtype> InputBlocks(const std::vector<Array>& inputs) const;
  Mesh mesh_;
  std::vector<PartitionSpec> in_specs_;
  std::vector<PartitionSpec> out_specs_;
  std::optional<PallasCall> call_;
  ProgramBody body_;
  std::string name_;
};

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call);
ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, ProgramBody body,
                   std::string name = "program");

// Compares every device's outputs with the blocks of the expected global outputs;
// `detail` names the first device and element that differ.
Comparison CheckAgainstReference(const ShardMap& program, const RunResult& result,
                                 const std::vector<Array>& expected, double rtol = 0,
                                 double atol = 0);

}  // namespace tpusim::dsl
