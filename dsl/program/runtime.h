#pragma once

// The state one program run shares between its devices (the DSL's machinery; users see
// ProgramContext): each device's HBM ledger and barrier semaphore, the op sequence the
// first device to reach each step ran (SPMD checks), and the pallas_calls' shared slots.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/run_config.h"
#include "base/time.h"
#include "dsl/mesh.h"
#include "dsl/program/call_instance.h"
#include "dsl/program/context.h"
#include "dsl/program/value.h"

namespace tpusim::base {
class Engine;
}

namespace tpusim::dsl {

// One row of a device's per-op table: every step of one name (an HLO instruction, or an op
// of a hand-written program), how often it ran, for how long, and for how much of it the
// core waited on communication.
struct OpTime {
  std::string name;
  std::string op;    // the registry op or HLO opcode
  std::string kind;  // "compute", "collective", "kernel"
  int64_t count = 0;
  base::Picoseconds total = 0;    // summed durations (async ops: start to their end)
  base::Picoseconds exposed = 0;  // collectives: time the core waited for them
  bool async = false;
};

// One lax collective of a program as the run report shows it: which algorithm ran and where
// its time went. Calls of one step with the same algorithm and size share a record.
struct CollectiveRecord {
  std::string step;       // the step's name, as in the per-op table
  std::string op;         // "psum", "all_gather", ...
  std::string algorithm;  // "bidi_ring", or per stage "ring over x, direct over y"
  bool forced = false;    // given by the op's algorithm attribute or the run's option
  uint64_t bytes = 0;     // the operand, per device
  // The cost estimate's split of one call (kernels/lax/cost_model.h): route latencies, and
  // bytes on the busiest link over the link bandwidth; and the most bytes one link
  // direction carries in the call.
  double latency_s = 0;
  double bandwidth_s = 0;
  double busiest_link_bytes = 0;
  int64_t count = 0;
  base::Picoseconds total = 0;  // simulated time of the calls on this device
};

struct DeviceProgramState {
  int next_step = 0;
  std::vector<std::string> pending_async;  // started and not done yet, by name
  // What the async ops still running read: an op that writes one of these buffers in place
  // (input_output_aliases) before the matching *_done races with it.
  struct AsyncRead {
    int step;  // the async op's step: its *_done removes its reads
    std::string op;
    base::BufferHandle buffer;
    std::string value;
    base::Picoseconds started;  // when the op started reading
  };
  std::vector<AsyncRead> async_reads;
  base::Picoseconds async_wait = 0;      // time the core waited in *_done
  std::vector<ShapeDtype> result_types;  // what the body returned
  bool finished = false;
  base::Picoseconds end = 0;  // when the body returned
  // The per-op table: rows by step name, in the order they first ran.
  std::vector<OpTime> op_times;
  std::map<std::string, size_t> op_rows;
  OpTime& Row(const std::string& name, const std::string& op, const std::string& kind);
  // The collectives, in the order they first ran.
  std::vector<CollectiveRecord> collectives;
  std::map<std::string, size_t> collective_rows;
};

struct ProgramRun {
  // Makes each chip's HBM ledger. `config` outlives the run: every call of it reads its
  // interpret-mode options there.
  ProgramRun(const Mesh& mesh, base::Engine& engine, const base::RunConfig& config);

  // Runs `body` on `port`'s device and keeps its results (checked against out_specs).
  void RunDevice(base::CorePort& port, const ProgramBody& body, const std::vector<Value>& inputs,
                 const std::vector<PartitionSpec>& out_specs);
  // Throws Error(kInvalidArgument) when `device` runs something else at `step` than the
  // first device that got there (SPMD divergence).
  void CheckSpmd(int device, int step, const std::string& signature);
  // The pallas_call of `step`, made by the first device to reach it.
  CallInstance& CallAt(int step, const PallasCall& call, const std::vector<ShapeDtype>& inputs);
  // By device and core (device * the chip's TensorCores + core), the barrier semaphore of
  // `collective_id`: one per core and id, as Mosaic gives each core of a megacore chip its
  // own semaphores (docs/dsl.md, "Megacore"); made on every chip when a call first asks for
  // the id, and shared by every call that names it.
  const std::vector<uint32_t>& BarrierSemaphores(int collective_id);
  // Throws Error(kInvalidArgument) when `value` is not `device`'s own value of this run
  // (another device's, read from its HBM for free, or one kept from an earlier run);
  // `what` names it: "all_gather x: operand 0".
  void CheckOwner(const Value& value, int device, const std::string& what) const;
  // After the run: a divergence no op could see (devices that ran different numbers of
  // steps or returned different types); empty when none.
  std::string CheckAfterRun() const;
  // The run is over: frees from here on touch no simulator.
  void Detach();

  const Mesh& mesh;
  const base::RunConfig& config;
  std::vector<std::shared_ptr<DeviceHbm>> hbm;  // by device
  std::vector<DeviceProgramState> devices;
  std::vector<std::vector<Value>> outputs;  // by device

 private:
  struct StepRecord {
    std::string signature;
    int device;
  };
  base::Engine& engine_;
  std::vector<StepRecord> steps_;
  std::map<int, std::vector<uint32_t>> barriers_;  // collective_id -> by device
  std::map<int, std::unique_ptr<CallInstance>> calls_;
};

}  // namespace tpusim::dsl
