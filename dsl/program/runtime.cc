#include "dsl/program/runtime.h"

#include "base/engine.h"
#include "base/errors.h"

namespace tpusim::dsl {

namespace {

std::string TypesString(const std::vector<ShapeDtype>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i)
    s += (i ? ", " : "") + TypeString(types[i].dtype, types[i].shape);
  return s + ")";
}

std::string SpecsString(const std::vector<PartitionSpec>& specs) {
  std::string s = "(";
  for (size_t i = 0; i < specs.size(); ++i)
    s += (i ? ", " : "") + specs[i].Describe();
  return s + ")";
}

}  // namespace

ProgramRun::ProgramRun(const Mesh& mesh_, base::Engine& engine, const base::RunConfig& config_)
    : mesh(mesh_),
      config(config_),
      devices(mesh_.devices()),
      outputs(mesh_.devices()),
      engine_(engine) {
  for (int d = 0; d < mesh.devices(); ++d) {
    hbm.push_back(std::make_shared<DeviceHbm>(engine, static_cast<base::ChipId>(d)));
    hbm.back()->zero_uninitialized =
        config.uninitialized_memory == base::UninitializedMemory::kZero;
  }
}

const std::vector<uint32_t>& ProgramRun::BarrierSemaphores(int collective_id) {
  auto& semaphores = barriers_[collective_id];
  if (semaphores.empty()) {
    const int cores = static_cast<int>(mesh.topology().chip().tensor_cores());
    for (int d = 0; d < mesh.devices(); ++d) {
      for (int core = 0; core < cores; ++core) {
        // On a chip of one core the name stays what it always was.
        std::string name = "barrier_semaphore (collective_id " + std::to_string(collective_id);
        if (cores > 1) {
          name += ", core ";
          name += std::to_string(core);
        }
        name += ')';
        semaphores.push_back(
            engine_.AddSemaphore(static_cast<base::ChipId>(d), base::SemaphoreKind::kBarrier, name)
                .index);
      }
    }
  }
  return semaphores;
}

OpTime& DeviceProgramState::Row(const std::string& name, const std::string& op,
                                const std::string& kind) {
  auto [it, added] = op_rows.emplace(name, op_times.size());
  if (added) op_times.push_back(OpTime{name, op, kind});
  return op_times[it->second];
}

void ProgramRun::RunDevice(base::CorePort& port, const ProgramBody& body,
                           const std::vector<Value>& inputs,
                           const std::vector<PartitionSpec>& out_specs) {
  const int device = static_cast<int>(port.chip());
  hbm[device]->Attach(&port);
  ProgramContext ctx(*this, device, port);
  std::vector<Value> results = body(ctx, inputs);
  hbm[device]->ThrowPendingError();
  DeviceProgramState& state = devices[device];
  state.end = port.Now();
  if (!state.pending_async.empty()) {
    throw Error(ErrorKind::kInvalidArgument,
                "the program started '" + state.pending_async.front() +
                    "' asynchronously and never waited for it; call its *_done (CallDone) "
                    "before the body returns.");
  }
  for (const Value& v : results) {
    if (!v.defined()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "the shard_map body returned an empty Value; return the results of ops.");
    }
    if (!v.donated_to().empty()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "the shard_map body returns " + v.Describe() + ", which was donated to '" +
                      v.donated_to() +
                      "' by its input_output_aliases; return that call's output instead.");
    }
    CheckOwner(v, device,
               "the shard_map body's result " + std::to_string(state.result_types.size()));
    state.result_types.push_back(v.type());
  }
  if (results.size() != out_specs.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                "the shard_map body returns " + std::to_string(results.size()) + " values " +
                    TypesString(state.result_types) + " but out_specs has " +
                    std::to_string(out_specs.size()) + " " + SpecsString(out_specs) +
                    "; give one PartitionSpec per result.");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (out_specs[i].entries().size() > results[i].shape().size()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "out_specs[" + std::to_string(i) + "] " + out_specs[i].Describe() + " names " +
                      std::to_string(out_specs[i].entries().size()) +
                      " dimensions, but the body's result " + std::to_string(i) + " is " +
                      results[i].Describe() + "; give at most one entry per dimension.");
    }
    for (const auto& entry : out_specs[i].entries()) {
      for (const auto& axis : entry.axes)
        mesh.AxisIndex(axis);  // names the mesh's axes when it is not one
    }
  }
  state.finished = true;
  outputs[device] = std::move(results);
}

void ProgramRun::CheckOwner(const Value& value, int device, const std::string& what) const {
  if (value.home() == hbm[device].get()) return;
  for (size_t owner = 0; owner < hbm.size(); ++owner) {
    if (value.home() != hbm[owner].get()) continue;
    throw Error(ErrorKind::kInvalidArgument,
                what + " (" + value.Describe() + ") is device " + std::to_string(owner) +
                    "'s value, used on device " + std::to_string(device) +
                    ": each device's values live in its own HBM. Move data between devices "
                    "with a collective (ppermute, all_gather, psum), not by sharing Values "
                    "between the body's calls.");
  }
  throw Error(ErrorKind::kInvalidArgument,
              what + " (" + value.Describe() +
                  ") is a value from an earlier run (or another program), used on device " +
                  std::to_string(device) +
                  ": values live for one run. Pass data between runs as host Arrays (a "
                  "RunResult's outputs as the next run's inputs).");
}

void ProgramRun::CheckSpmd(int device, int step, const std::string& signature) {
  if (step < static_cast<int>(steps_.size())) {
    const StepRecord& first = steps_[step];
    if (first.signature == signature) return;
    throw Error(ErrorKind::kInvalidArgument,
                "SPMD divergence: device " + std::to_string(device) + " runs " + signature +
                    " as step " + std::to_string(step) + ", but device " +
                    std::to_string(first.device) + " ran " + first.signature +
                    " there. Every device must run the same sequence of ops; make control "
                    "flow depend on values (select, dynamic_slice), not on axis_index.");
  }
  steps_.push_back(StepRecord{signature, device});
}

CallInstance& ProgramRun::CallAt(int step, const PallasCall& call,
                                 const std::vector<ShapeDtype>& inputs) {
  auto& instance = calls_[step];
  if (instance) return *instance;
  std::vector<uint32_t> barriers;
  if (call.compiler_params.collective_id)
    barriers = BarrierSemaphores(*call.compiler_params.collective_id);
  instance = std::make_unique<CallInstance>(mesh, call, inputs, std::move(barriers), config);
  return *instance;
}

std::string ProgramRun::CheckAfterRun() const {
  for (size_t d = 1; d < devices.size(); ++d) {
    const auto& a = devices[0];
    const auto& b = devices[d];
    if (a.next_step != b.next_step) {
      return "SPMD divergence: device " + std::to_string(d) + " ran " +
             std::to_string(b.next_step) + " ops but device 0 ran " + std::to_string(a.next_step) +
             ". Every device must run the same sequence of ops.";
    }
    bool same = a.result_types.size() == b.result_types.size();
    for (size_t i = 0; same && i < a.result_types.size(); ++i) {
      same = a.result_types[i].shape == b.result_types[i].shape &&
             a.result_types[i].dtype == b.result_types[i].dtype;
    }
    if (!same) {
      return "SPMD divergence: device " + std::to_string(d) + " returns " +
             TypesString(b.result_types) + " but device 0 returns " + TypesString(a.result_types) +
             "; every device must return the same types.";
    }
  }
  return "";
}

void ProgramRun::Detach() {
  for (auto& h : hbm)
    h->Detach();
}

}  // namespace tpusim::dsl
