#include "dsl/program/context.h"

#include <algorithm>
#include <utility>

#include "base/errors.h"
#include "dsl/program/op_registry.h"
#include "dsl/program/runtime.h"

namespace tpusim::dsl {

namespace {

std::string Signature(const std::string& name, const std::vector<Value>& operands,
                      const std::vector<ShapeDtype>& results) {
  std::string s = "'" + name + "' (";
  for (size_t i = 0; i < operands.size(); ++i)
    s += (i ? ", " : "") + operands[i].Describe();
  s += ") -> (";
  for (size_t i = 0; i < results.size(); ++i)
    s += (i ? ", " : "") + TypeString(results[i].dtype, results[i].shape);
  return s + ")";
}

base::Region WholeBuffer(const Value& v) {
  base::Region region;
  region.buffer = v.buffer();
  region.box.counts = {v.nbytes()};
  region.box.strides = {1};
  return region;
}

}  // namespace

ProgramContext::ProgramContext(ProgramRun& run, int device, base::CorePort& port)
    : ProgramContext(run, device, port, run.devices[device], -1) {}

ProgramContext::ProgramContext(ProgramRun& run, int device, base::CorePort& port,
                               DeviceProgramState& state, int step)
    : run_(run), device_(device), port_(port), state_(state), step_(step) {}

const Mesh& ProgramContext::mesh() const {
  return run_.mesh;
}

int ProgramContext::axis_index(const std::string& axis) const {
  return mesh().CoordsOf(device_)[mesh().AxisIndex(axis)];
}

int ProgramContext::axis_size(const std::string& axis) const {
  return mesh().AxisSize(axis);
}

std::vector<Value> ProgramContext::Step(const StepInfo& info, const std::vector<Value>& operands,
                                        const std::vector<ShapeDtype>& result_types,
                                        const StepBody& body, AsyncValues* started,
                                        const std::vector<std::string>& labels) {
  const std::string& name = info.label.name;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].defined() || operands[i].donated_to().empty()) continue;
    ThrowOpError(name, "operand " + std::to_string(i) + " (" + operands[i].Describe() +
                           ") was donated to '" + operands[i].donated_to() +
                           "' by its input_output_aliases: that call's output owns the buffer "
                           "now. Use the output instead, or drop the alias so the call writes "
                           "a new buffer.");
  }
  for (size_t i = 0; i < operands.size(); ++i)
    run_.CheckOwner(operands[i], device_, name + ": operand " + std::to_string(i));
  const int step = state_.next_step++;
  run_.CheckSpmd(device_, step, Signature(name, operands, result_types));
  std::vector<Value> results;
  for (size_t i = 0; i < result_types.size(); ++i) {
    results.push_back(
        Value::Allocate(run_.hbm[device_], result_types[i],
                        i < labels.size() ? labels[i] : name + " result " + std::to_string(i)));
  }
  OpTime& row = state_.Row(name, info.label.op, info.kind);
  ++row.count;
  if (started) {
    row.async = true;
    started->name_ = name;
    started->results_ = results;
    started->step_ = step;
    started->table_key_ = name;
    state_.pending_async.push_back(name);
    for (const Value& v : operands)
      state_.async_reads.push_back({step, name, v.buffer(), v.Describe(), port_.Now()});
    // The activity's own context shares this device's state; it holds the operands and
    // results, so their buffers live until the op is done.
    started->activity_ = port_.Spawn(name, [&run = run_, device = device_, &state = state_, step,
                                            body, operands, results, name](base::CorePort& port) {
      ProgramContext ctx(run, device, port, state, step);
      ctx.step_name_ = name;
      const base::Picoseconds begin = port.Now();
      body(ctx, results);
      state.op_times[state.op_rows.at(name)].total += port.Now() - begin;
    });
    return results;
  }
  const base::Picoseconds begin = port_.Now();
  port_.BeginScope(name, info.label.details);
  const int outer = step_;
  std::string outer_name = std::exchange(step_name_, name);
  step_ = step;
  body(*this, results);
  step_ = outer;
  step_name_ = std::move(outer_name);
  port_.EndScope();
  row.total += port_.Now() - begin;
  if (info.kind == "collective") row.exposed += port_.Now() - begin;
  run_.hbm[device_]->ThrowPendingError();
  return results;
}

std::vector<Value> ProgramContext::Call(const std::string& op, const std::vector<Value>& operands,
                                        const Attributes& attrs) {
  return CallOp(op, operands, attrs, nullptr);
}

std::vector<Value> ProgramContext::CallAs(const StepLabel& label, const std::string& op,
                                          const std::vector<Value>& operands,
                                          const Attributes& attrs) {
  return CallOp(op, operands, attrs, nullptr, &label);
}

AsyncValues ProgramContext::CallStartAs(const StepLabel& label, const std::string& op,
                                        const std::vector<Value>& operands,
                                        const Attributes& attrs) {
  AsyncValues started;
  started.results_ = CallOp(op, operands, attrs, &started, &label);
  return started;
}

AsyncValues ProgramContext::CallStart(const std::string& op, const std::vector<Value>& operands,
                                      const Attributes& attrs) {
  AsyncValues started;
  started.results_ = CallOp(op, operands, attrs, &started);
  return started;
}

std::vector<Value> ProgramContext::CallOp(const std::string& op, const std::vector<Value>& operands,
                                          const Attributes& attrs, AsyncValues* started,
                                          const StepLabel* label) {
  const OpDef& def = OpRegistry::Get().Find(op);
  const int count = static_cast<int>(operands.size());
  if (count < def.min_operands || (def.max_operands >= 0 && count > def.max_operands)) {
    const std::string want =
        def.max_operands < 0 ? "at least " + std::to_string(def.min_operands)
        : def.min_operands == def.max_operands
            ? std::to_string(def.min_operands)
            : std::to_string(def.min_operands) + " to " + std::to_string(def.max_operands);
    ThrowOpError(op, "takes " + want + " operands, got " + std::to_string(count) + ".");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].defined()) {
      ThrowOpError(op, "operand " + std::to_string(i) +
                           " is an empty Value; pass the result of an op or a program input.");
    }
  }
  const Attributes resolved = ResolveAttributes(def, attrs);
  std::vector<ShapeDtype> types;
  for (const Value& v : operands)
    types.push_back(v.type());
  const OpTyping typing{op, mesh(), types, resolved};
  if (def.lower) return PallasCallStep(def.lower(typing), operands, started, label);
  const std::vector<ShapeDtype> result_types = def.shape(typing);
  StepInfo info;
  info.label = label ? *label : StepLabel{def.describe ? def.describe(resolved) : op, op};
  info.kind = def.collective ? "collective" : "compute";
  return Step(
      info, operands, result_types,
      [&def, resolved, operands, types](ProgramContext& ctx, const std::vector<Value>& results) {
        OpRun run{ctx, operands, results, resolved};
        if (def.run) {
          def.run(run);
        } else {
          ctx.RunByParts(def, run, types);
        }
      },
      started);
}

void ProgramContext::RunByParts(const OpDef& def, OpRun& run,
                                const std::vector<ShapeDtype>& operand_types) {
  std::vector<ShapeDtype> result_types;
  for (const Value& v : run.results)
    result_types.push_back(v.type());
  if (functional()) {
    if (!def.compute) {
      ThrowOpError(def.name,
                   "has no host numerics, so a functional run cannot compute its result; run "
                   "timing-only.");
    }
    std::vector<Array> inputs;
    for (const Value& v : run.operands)
      inputs.push_back(Read(v));
    const std::vector<Array> outputs =
        def.compute(OpCompute{def.name, inputs, run.attrs, result_types});
    for (size_t i = 0; i < run.results.size(); ++i)
      Write(run.results[i], outputs.at(i));
  }
  const OpTyping typing{def.name, mesh(), operand_types, run.attrs};
  ChargeWork(def.work ? def.work(typing, result_types) : MemoryBoundWork(typing, result_types),
             def.name);
}

void ProgramContext::ChargeWork(const XlaWork& work, const std::string& what) {
  port_.Execute(work, what);
}

std::vector<Value> ProgramContext::CallDone(AsyncValues& started) {
  if (started.done_ || started.name_.empty()) {
    throw Error(ErrorKind::kInvalidArgument,
                "*_done on '" + started.name_ +
                    "', which is not running: it was waited for already, or never started.");
  }
  const base::Picoseconds since = port_.Now();
  port_.Join(started.activity_);
  state_.async_wait += port_.Now() - since;
  state_.op_times[state_.op_rows.at(started.table_key_)].exposed += port_.Now() - since;
  started.done_ = true;
  auto& pending = state_.pending_async;
  pending.erase(std::find(pending.begin(), pending.end(), started.name_));
  std::erase_if(state_.async_reads, [&](const auto& read) { return read.step == started.step_; });
  run_.hbm[device_]->ThrowPendingError();
  return std::move(started.results_);
}

std::vector<Value> ProgramContext::pallas_call(const PallasCall& call,
                                               const std::vector<Value>& inputs) {
  return PallasCallStep(call, inputs, nullptr);
}

AsyncValues ProgramContext::pallas_call_start(const PallasCall& call,
                                              const std::vector<Value>& inputs) {
  AsyncValues started;
  started.results_ = PallasCallStep(call, inputs, &started);
  return started;
}

void ProgramContext::CheckNoAsyncReader(const std::string& op, const Value& written,
                                        int input) const {
  for (const auto& read : state_.async_reads) {
    if (read.buffer != written.buffer()) continue;
    const std::string step = std::to_string(state_.next_step);
    base::RaceReport race;
    race.buffer = read.buffer;
    race.earlier = {port_.chip(), "the async '" + read.op + "' reading " + read.value, read.started,
                    "step " + std::to_string(read.step) + " ('" + read.op + "', not done yet)"};
    race.later = {port_.chip(), "'" + op + "' writing " + written.Describe() + " in place",
                  port_.Now(), "step " + step + " ('" + op + "')"};
    race.fix = "'" + op + "' (step " + step + ") writes its input " + std::to_string(input) + " (" +
               read.value + ") in place through input_output_aliases, but the async '" + read.op +
               "' started at step " + std::to_string(read.step) +
               " still reads that buffer. Call its *_done before this call, or drop the alias "
               "so the call writes a new buffer.";
    port_.ReportRace(race);
  }
}

std::vector<Value> ProgramContext::PallasCallStep(const PallasCall& call,
                                                  const std::vector<Value>& inputs,
                                                  AsyncValues* started, const StepLabel* label) {
  const std::string name = "pallas_call " + call.name;
  StepInfo info;
  info.label = label ? *label : StepLabel{name, "pallas_call"};
  info.kind = "kernel";
  std::vector<ShapeDtype> types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      ThrowOpError(name, "input " + std::to_string(i) +
                             " is an empty Value; pass the result of an op or a program input.");
    }
    types.push_back(inputs[i].type());
  }
  CheckPallasCall(call, inputs.size());
  CheckAliasTypes(call, types);
  // Aliased outputs are their inputs' buffers: only the others are new arrays.
  std::vector<int> alias_of(call.out_shape.size(), -1);
  for (const auto& [in, out] : call.input_output_aliases) {
    alias_of[out] = in;
    CheckNoAsyncReader(name, inputs[static_cast<size_t>(in)], in);
  }
  std::vector<ShapeDtype> fresh_types;
  std::vector<std::string> labels;
  for (size_t o = 0; o < call.out_shape.size(); ++o) {
    if (alias_of[o] >= 0) continue;
    fresh_types.push_back(call.out_shape[o]);
    labels.push_back(o < call.out_names.size() ? call.out_names[o] : "out" + std::to_string(o));
  }
  const std::vector<Value> fresh =
      Step(info, inputs, fresh_types, PallasCallBody(call, inputs, alias_of), started, labels);
  return PallasCallOutputs(alias_of, fresh,
                           [&](int in) { return inputs[static_cast<size_t>(in)].Donate(name); });
}

// The outputs in order, aliased ones taken from `aliased(input)`.
template <typename Aliased>
std::vector<Value> ProgramContext::PallasCallOutputs(const std::vector<int>& alias_of,
                                                     const std::vector<Value>& fresh,
                                                     const Aliased& aliased) {
  std::vector<Value> all;
  size_t next = 0;
  for (int in : alias_of)
    all.push_back(in >= 0 ? aliased(in) : fresh[next++]);
  return all;
}

// Made here, not in PallasCallStep: the closure (the call, about 330 bytes, and the inputs)
// would otherwise be a temporary in that frame, under which the kernel runs, and a core's
// stack is resident as deep as its deepest call (docs/performance-pod-memory.md).
ProgramContext::StepBody ProgramContext::PallasCallBody(const PallasCall& call,
                                                        const std::vector<Value>& inputs,
                                                        const std::vector<int>& alias_of) {
  // `call` by value: an async step runs after PallasCallStep returns, and the call may be a
  // temporary (pallas_call_start(Builder(...)), or one built by name).
  return [call, inputs, alias_of](ProgramContext& ctx, const std::vector<Value>& results) {
    ctx.RunPallasCall(call, inputs, PallasCallOutputs(alias_of, results, [&](int in) {
                        return inputs[static_cast<size_t>(in)];
                      }));
  };
}

const std::string& ProgramContext::collective_algorithm() const {
  static const std::string kEachChooses;  // "auto" means the same as nothing
  const std::string& name = run_.config.collective_algorithm;
  return name == "auto" ? kEachChooses : name;
}

void ProgramContext::NoteCollective(const CollectiveRecord& call) {
  CollectiveRecord record = call;
  record.step = step_name_;
  const std::string key = record.step + "|" + record.algorithm + "|" + std::to_string(record.bytes);
  auto [it, added] = state_.collective_rows.emplace(key, state_.collectives.size());
  if (added) {
    state_.collectives.push_back(record);
    state_.collectives.back().count = 0;
    state_.collectives.back().total = 0;
  }
  CollectiveRecord& row = state_.collectives[it->second];
  ++row.count;
  row.total += call.total;
}

void ProgramContext::RunPallasCall(const PallasCall& call, const std::vector<Value>& inputs,
                                   const std::vector<Value>& outputs) {
  std::vector<ShapeDtype> types;
  std::vector<base::BufferHandle> buffers;
  for (const Value& v : inputs) {
    types.push_back(v.type());
    buffers.push_back(v.buffer());
  }
  for (const Value& v : outputs)
    buffers.push_back(v.buffer());
  // Timing-only runs have no bytes to read: index maps see what the host knows.
  std::vector<std::optional<Array>> scalars;
  for (int i = 0; i < call.grid_spec.num_scalar_prefetch && !functional(); ++i)
    scalars.push_back(inputs[static_cast<size_t>(i)].host_values());
  CallInstance& instance = run_.CallAt(step_, call, types);
  instance.Run(port_, buffers, scalars);
}

Array ProgramContext::Read(const Value& v) {
  Array out(v.shape(), v.dtype());
  if (functional()) port_.Load(WholeBuffer(v), out.data(), "program op reading " + v.Describe());
  return out;
}

void ProgramContext::Write(const Value& v, const Array& data) {
  if (!functional()) return;
  if (data.shape() != v.shape() || data.dtype() != v.dtype()) {
    throw Error(ErrorKind::kKernelMisuse, "an op wrote " + TypeString(data.dtype(), data.shape()) +
                                              " into a result of type " + v.Describe() + ".");
  }
  port_.Store(WholeBuffer(v), data.data(), "program op writing " + v.Describe());
}

}  // namespace tpusim::dsl
