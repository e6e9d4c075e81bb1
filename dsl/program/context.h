#pragma once

// What a shard_map program body sees on one device (JAX names throughout):
//
//   dsl::ShardMap program = dsl::shard_map(mesh, {P("x", "y"), P("x", nullptr)},
//       {P("x", nullptr)},
//       [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
//         Value w = ctx.all_gather(in[1], "x", /*axis=*/0, /*tiled=*/true);
//         Value rows = ctx.dynamic_slice(w, {ctx.axis_index("y") * 1024, 0}, {1024, 1024});
//         return {ctx.psum(ctx.dot(in[0], rows), "y")};
//       });
//
// Every device runs the body in its own core thread, on one simulated timeline. Each op
// is a step: a slice on the core's trace track named after it ("all_gather x", "dot",
// "pallas_call matmul"). Its results are new HBM arrays (Values), freed when the last
// handle goes away. Every device must run the same sequence of ops (SPMD); a device that
// runs a different op at the same step is an error naming both.
//
// Ops are called by name (Call) with attributes; the typed methods below are thin
// wrappers. Array ops compute with host numerics in functional mode and describe their work
// (an XlaWork) for the model to time as XLA's compiled op; collectives are Pallas kernels
// (kernels/lax/collectives.h) that run on this core; pallas_call runs any kernel with
// its ANY operands bound to the values' HBM buffers.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/core_port.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "dsl/program/attributes.h"
#include "dsl/program/value.h"

namespace tpusim::dsl {

struct ProgramRun;
struct CollectiveRecord;
struct DeviceProgramState;
struct OpDef;
struct OpRun;

// How a step shows on the trace and in the run's per-op table: its name (default: the op's
// description, e.g. "all_gather x"; an HLO instruction's name), the op it counts as (default:
// the registry op; an HLO opcode) and details the trace shows as its arguments (op_name...).
struct StepLabel {
  std::string name;
  std::string op;
  base::CorePort::ScopeDetails details = {};
};

// An op started with *_start (or CallStart): its results, valid after the matching done.
class AsyncValues {
 public:
  const std::string& name() const { return name_; }

 private:
  friend class ProgramContext;
  base::CorePort::ActivityId activity_ = 0;
  std::vector<Value> results_;
  std::string name_;
  bool done_ = false;
  int step_ = -1;
  std::string table_key_;  // its row in the per-op table
};

class ProgramContext {
 public:
  ProgramContext(ProgramRun& run, int device, base::CorePort& port);

  int device_id() const { return device_; }
  const Mesh& mesh() const;
  bool functional() const { return port_.functional(); }
  // lax.axis_index / lax.psum(1, axis): throw Error(kInvalidArgument) naming the mesh's
  // axes when `axis` is not one.
  int axis_index(const std::string& axis) const;
  int axis_size(const std::string& axis) const;

  // Runs op `op` (OpRegistry) on `operands` with `attrs`, as one step:
  //   ctx.Call("all_gather", {x}, {{"axis_name", "x"}, {"axis", 0}, {"tiled", true}})
  // A registered kernel is the op "pallas_call" with its call_target_name
  // (dsl/program/op_registry.h):
  //   ctx.Call("pallas_call", {a, b}, {{"call_target_name", "matmul"}, {"bm", 256}})
  std::vector<Value> Call(const std::string& op, const std::vector<Value>& operands,
                          const Attributes& attrs = {});
  // The op runs next to the ops issued after it (a second thread of control on this
  // chip, sharing its DMA engines, links and compute units) until CallDone, which waits
  // for it. The time the core waits there is the op's exposed time.
  AsyncValues CallStart(const std::string& op, const std::vector<Value>& operands,
                        const Attributes& attrs = {});
  std::vector<Value> CallDone(AsyncValues& started);
  // Call and CallStart with the step named and counted as `label` says.
  std::vector<Value> CallAs(const StepLabel& label, const std::string& op,
                            const std::vector<Value>& operands, const Attributes& attrs = {});
  AsyncValues CallStartAs(const StepLabel& label, const std::string& op,
                          const std::vector<Value>& operands, const Attributes& attrs = {});

  // Array ops (jax.lax / jax.numpy). Shapes must match exactly (no broadcasting).
  // dot: a [M, K] @ b [K, N], f32 accumulation, result in preferred_element_type (default:
  // the operands' dtype); precision as jax.lax.Precision (f32 operands: DEFAULT one bf16
  // pass, HIGH three, HIGHEST six).
  Value dot(const Value& a, const Value& b, std::optional<DType> preferred_element_type = {},
            Precision precision = Precision::kDefault);
  Value matmul(const Value& a, const Value& b, std::optional<DType> preferred_element_type = {}) {
    return dot(a, b, preferred_element_type);
  }
  Value add(const Value& a, const Value& b);
  Value multiply(const Value& a, const Value& b);
  Value max(const Value& a, const Value& b);
  Value relu(const Value& x);
  Value astype(const Value& x, DType dtype);
  // lax.dynamic_slice: starts may depend on axis_index; clamped so the slice fits, as JAX.
  Value dynamic_slice(const Value& x, const std::vector<int64_t>& start_indices,
                      const std::vector<int64_t>& slice_sizes);
  Value concatenate(const std::vector<Value>& xs, int dimension);
  Value zeros(const Shape& shape, DType dtype);

  // lax collectives over mesh axes (kernels/lax/collectives.h documents the algorithms).
  Value all_gather(const Value& x, const std::string& axis_name, int axis = 0, bool tiled = false);
  Value psum(const Value& x, const std::vector<std::string>& axis_name);
  Value psum(const Value& x, const std::string& axis_name) {
    return psum(x, std::vector<std::string>{axis_name});
  }
  Value psum_scatter(const Value& x, const std::string& axis_name, int scatter_dimension = 0,
                     bool tiled = false);
  // perm: (source, destination) pairs of indices along the axis; devices that are no
  // pair's destination get zeros.
  Value ppermute(const Value& x, const std::string& axis_name, const IntPairs& perm);
  Value all_to_all(const Value& x, const std::string& axis_name, int split_axis, int concat_axis,
                   bool tiled = false);
  // XLA's async pairs: the collective overlaps with the ops issued before *_done.
  AsyncValues all_gather_start(const Value& x, const std::string& axis_name, int axis = 0,
                               bool tiled = false);
  Value all_gather_done(AsyncValues& started) { return CallDone(started).at(0); }
  AsyncValues psum_start(const Value& x, const std::vector<std::string>& axis_name);
  Value psum_done(AsyncValues& started) { return CallDone(started).at(0); }
  AsyncValues psum_scatter_start(const Value& x, const std::string& axis_name,
                                 int scatter_dimension = 0, bool tiled = false);
  Value psum_scatter_done(AsyncValues& started) { return CallDone(started).at(0); }
  AsyncValues ppermute_start(const Value& x, const std::string& axis_name, const IntPairs& perm);
  Value ppermute_done(AsyncValues& started) { return CallDone(started).at(0); }
  AsyncValues all_to_all_start(const Value& x, const std::string& axis_name, int split_axis,
                               int concat_axis, bool tiled = false);
  Value all_to_all_done(AsyncValues& started) { return CallDone(started).at(0); }

  // Runs `call` on this device with `inputs` as its operands (in HBM); its outputs are
  // new values. Its scratch, pipeline buffers and semaphores exist while the device is
  // inside the call: a remote copy into a device that has not entered the call yet is an
  // error (a missing start barrier).
  // input_output_aliases {i: o}: output o is input i's buffer, and input i is donated
  // (dsl/program/value.h): using it in a later op is an error naming the call.
  std::vector<Value> pallas_call(const PallasCall& call, const std::vector<Value>& inputs);
  // The call runs beside the ops issued before pallas_call_done, like an async collective.
  AsyncValues pallas_call_start(const PallasCall& call, const std::vector<Value>& inputs);
  std::vector<Value> pallas_call_done(AsyncValues& started) { return CallDone(started); }

  // For op run functions: a value's bytes (functional mode; empty arrays otherwise), a
  // value's new contents, and the op's work, which the model times (a launch, its units,
  // its HBM traffic beside the DMAs in flight; docs/time-model.md).
  Array Read(const Value& v);
  void Write(const Value& v, const Array& data);
  void ChargeWork(const XlaWork& work, const std::string& what);
  // An op described by its parts (OpDef::compute and OpDef::work): numerics in functional
  // runs, then its work.
  void RunByParts(const OpDef& def, OpRun& run, const std::vector<ShapeDtype>& operand_types);
  base::CorePort& port() { return port_; }
  // The run's choice of algorithm for every lax collective (RunOptions::collective_algorithm;
  // empty: each chooses its own).
  const std::string& collective_algorithm() const;
  // Adds a collective's call to the run report's records, under the current step's name.
  void NoteCollective(const CollectiveRecord& record);
  // Runs `call` with `inputs` and preallocated `outputs` (how collectives run their kernel).
  void RunPallasCall(const PallasCall& call, const std::vector<Value>& inputs,
                     const std::vector<Value>& outputs);

 private:
  friend struct ProgramRun;
  ProgramContext(ProgramRun& run, int device, base::CorePort& port, DeviceProgramState& state,
                 int step);
  using StepBody = std::function<void(ProgramContext&, const std::vector<Value>& results)>;
  // Checks SPMD order, allocates the results, and runs `body` as one traced step (or as
  // a spawned activity when `started` is given).
  // `labels` name the results in HBM capacity reports (default "<name> result <i>").
  // `label`: the step's name, the op it counts as in the per-op table, and the kind of
  // time it is ("compute", "collective", "kernel").
  struct StepInfo {
    StepLabel label;
    std::string kind = "compute";
  };
  // PallasCallStep's parts, out of its frame (context.cc says why).
  [[gnu::noinline]] static StepBody PallasCallBody(const PallasCall& call,
                                                   const std::vector<Value>& inputs,
                                                   const std::vector<int>& alias_of);
  template <typename Aliased>
  static std::vector<Value> PallasCallOutputs(const std::vector<int>& alias_of,
                                              const std::vector<Value>& fresh,
                                              const Aliased& aliased);
  std::vector<Value> Step(const StepInfo& info, const std::vector<Value>& operands,
                          const std::vector<ShapeDtype>& result_types, const StepBody& body,
                          AsyncValues* started = nullptr,
                          const std::vector<std::string>& labels = {});

  std::vector<Value> PallasCallStep(const PallasCall& call, const std::vector<Value>& inputs,
                                    AsyncValues* started, const StepLabel* label = nullptr);
  // Call (started unset) and CallStart: checks the operands and attributes, then runs the
  // op as a step, or as its pallas_call when the op lowers to one (OpDef::lower).
  std::vector<Value> CallOp(const std::string& op, const std::vector<Value>& operands,
                            const Attributes& attrs, AsyncValues* started,
                            const StepLabel* label = nullptr);

  // Throws Error(kRace) when an async op still running reads `written`, which `op` is
  // about to write in place (its input `input`, aliased to an output).
  void CheckNoAsyncReader(const std::string& op, const Value& written, int input) const;

  ProgramRun& run_;
  int device_;
  base::CorePort& port_;
  DeviceProgramState& state_;
  int step_ = -1;          // the step being run (pallas_call layouts are shared per step)
  std::string step_name_;  // and its name
};

using ProgramBody =
    std::function<std::vector<Value>(ProgramContext&, const std::vector<Value>& inputs)>;

}  // namespace tpusim::dsl
