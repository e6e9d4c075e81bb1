#pragma once

// shard_map over a pallas_call: splits global inputs into per-device blocks by their
// PartitionSpecs, runs the kernel on every device of the mesh in the simulator, and
// assembles the outputs. A run gives the data, the timing and (optionally) a trace.

#include <optional>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "sim/errors.h"
#include "sim/system.h"
#include "traces/trace_sink.h"

namespace tpusim::dsl {

// What memory no one has written reads as (Pallas interpret mode's uninitialized_memory):
// NaN (integers: the dtype's largest value), so a kernel that reads what it never wrote
// gives visibly wrong data, or zero.
enum class UninitializedMemory { kNan, kZero };

struct RunOptions {
  // Timing-only runs move no payload; their inputs may be Array placeholders.
  bool functional = true;
  traces::TraceSink* trace = nullptr;
  sim::Picoseconds time_limit = 60'000'000'000'000ull;
  std::vector<double> chip_slowdown;
  // Happens-before race detection (functional runs; interpret mode's detect_races).
  bool race_check = true;
  // Outputs, scratch and pipeline buffers before the kernel writes them; inputs are set.
  UninitializedMemory uninitialized_memory = UninitializedMemory::kNan;
  // Runs the grid points of 'parallel' dimensions in an order drawn from this seed
  // (interpret mode's random_seed); unset, every grid runs in lexicographic order.
  std::optional<uint64_t> grid_seed;
};

struct RunResult {
  bool ok = false;
  std::optional<ErrorKind> error_kind;
  std::string error;
  sim::RunStats stats;
  std::vector<Array> outputs;                      // global, assembled (functional runs)
  std::vector<std::vector<Array>> device_outputs;  // [output][device] (functional runs)

  sim::Picoseconds time() const { return stats.end_time; }
};

class ShardMap {
 public:
  ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
           PallasCall call);

  const Mesh& mesh() const { return mesh_; }
  const PallasCall& call() const { return call_; }
  const std::vector<PartitionSpec>& in_specs() const { return in_specs_; }
  const std::vector<PartitionSpec>& out_specs() const { return out_specs_; }

  // Throws Error(kInvalidArgument) for inputs that do not match the specs; every failure
  // during the simulation is reported in the result instead.
  RunResult Run(const std::vector<Array>& inputs, const RunOptions& options) const;

  // The block of `global` that output `index` of `device` should hold.
  Array ExpectedBlock(int output, const Array& global, int device) const;

 private:
  Mesh mesh_;
  std::vector<PartitionSpec> in_specs_;
  std::vector<PartitionSpec> out_specs_;
  PallasCall call_;
};

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call);

// Compares every device's outputs with the blocks of the expected global outputs;
// `detail` names the first device and element that differ.
Comparison CheckAgainstReference(const ShardMap& program, const RunResult& result,
                                 const std::vector<Array>& expected, double rtol = 0,
                                 double atol = 0);

}  // namespace tpusim::dsl
