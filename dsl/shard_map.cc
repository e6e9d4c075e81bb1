#include "dsl/shard_map.h"

#include "base/core_port.h"
#include "dsl/program/call_instance.h"
#include "dsl/program/runtime.h"

namespace tpusim::dsl {

PallasCall pallas_call(std::string name, KernelFn kernel, GridSpec grid_spec,
                       std::vector<ShapeDtype> out_shape, CompilerParams compiler_params,
                       InputOutputAliases input_output_aliases) {
  PallasCall call;
  call.name = std::move(name);
  call.kernel = std::move(kernel);
  call.grid_spec = std::move(grid_spec);
  call.out_shape = std::move(out_shape);
  call.compiler_params = std::move(compiler_params);
  call.input_output_aliases = std::move(input_output_aliases);
  return call;
}

ShardMap::ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call)
    : mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)),
      call_(std::move(call)),
      name_(call_->name) {
  if (out_specs_.size() != call_->out_shape.size()) {
    throw Error(ErrorKind::kInvalidArgument, call_->name + ": shard_map has " +
                                                 std::to_string(out_specs_.size()) +
                                                 " out_specs but the pallas_call has " +
                                                 std::to_string(call_->out_shape.size()) +
                                                 " outputs; give one PartitionSpec per output.");
  }
  for (size_t o = 0; o < out_specs_.size(); ++o) {
    const Shape& block = call_->out_shape[o].shape;
    if (out_specs_[o].entries().size() > block.size()) {
      throw Error(ErrorKind::kInvalidArgument, call_->name + ": out_specs[" + std::to_string(o) +
                                                   "] " + out_specs_[o].Describe() + " names " +
                                                   std::to_string(out_specs_[o].entries().size()) +
                                                   " dimensions, but output " + std::to_string(o) +
                                                   " has rank " + std::to_string(block.size()) +
                                                   " (block shape " + ShapeString(block) +
                                                   "); give at most one entry per dimension.");
    }
  }
  CheckSpecAxes();
  CheckPallasCall(*call_, in_specs_.size());
  // BlockSpecs are checked against the operands' shapes in Run (CallInstance).
  body_ = [call = *call_](ProgramContext& ctx, const std::vector<Value>& inputs) {
    return ctx.pallas_call(call, inputs);
  };
}

ShardMap::ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, ProgramBody body, std::string name)
    : mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)),
      body_(std::move(body)),
      name_(std::move(name)) {
  CheckSpecAxes();
}

void ShardMap::CheckSpecAxes() const {
  for (const auto* specs : {&in_specs_, &out_specs_}) {
    for (const auto& spec : *specs) {
      for (const auto& entry : spec.entries()) {
        for (const auto& axis : entry.axes)
          mesh_.AxisIndex(axis);  // throws, naming the mesh's axes
      }
    }
  }
}

const PallasCall& ShardMap::call() const {
  if (!call_) {
    throw Error(ErrorKind::kInvalidArgument,
                name_ + " is a program, not a single pallas_call; it has no call().");
  }
  return *call_;
}

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call) {
  return ShardMap(mesh, std::move(in_specs), std::move(out_specs), std::move(call));
}

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, ProgramBody body, std::string name) {
  return ShardMap(mesh, std::move(in_specs), std::move(out_specs), std::move(body),
                  std::move(name));
}

std::string ShardMap::InputName(size_t i) const {
  if (call_ && i < call_->in_names.size()) return call_->in_names[i];
  return "in" + std::to_string(i);
}

std::vector<ShapeDtype> ShardMap::InputBlocks(const std::vector<Array>& inputs) const {
  if (inputs.size() != in_specs_.size()) {
    throw Error(ErrorKind::kInvalidArgument, name_ + " takes " + std::to_string(in_specs_.size()) +
                                                 " inputs, got " + std::to_string(inputs.size()) +
                                                 ".");
  }
  std::vector<ShapeDtype> in_blocks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_blocks.push_back(
        ShapeDtype{in_specs_[i].BlockShape(mesh_, inputs[i].shape(), "input " + InputName(i)),
                   inputs[i].dtype()});
  }
  return in_blocks;
}

void ShardMap::Check(const std::vector<Array>& inputs) const {
  const std::vector<ShapeDtype> in_blocks = InputBlocks(inputs);
  if (call_) CallInstance(mesh_, *call_, in_blocks);
}

RunResult ShardMap::Run(const std::vector<Array>& inputs, const base::RunConfig& config) const {
  const std::vector<ShapeDtype> in_blocks = InputBlocks(inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (config.functional && !inputs[i].has_data()) {
      throw Error(ErrorKind::kInvalidArgument,
                  name_ + ": input " + InputName(i) +
                      " is a placeholder without data; functional runs need real inputs.");
    }
    if (call_ && static_cast<int>(i) < call_->grid_spec.num_scalar_prefetch &&
        !inputs[i].has_data()) {
      throw Error(ErrorKind::kInvalidArgument,
                  name_ + ": scalar-prefetch input " + InputName(i) +
                      " is a placeholder without data, but index maps read its values even in "
                      "timing-only runs; pass its real values.");
    }
  }
  // A kernel's BlockSpecs fail here, before the run, as they always have.
  if (call_) CallInstance(mesh_, *call_, in_blocks);

  const std::unique_ptr<base::Engine> engine = base::BuildEngine(mesh_.topology(), config);
  ProgramRun run(mesh_, *engine, config);

  std::vector<std::vector<Value>> device_inputs(mesh_.devices());
  for (int device = 0; device < mesh_.devices(); ++device) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value v = Value::Allocate(run.hbm[device], in_blocks[i], InputName(i));
      const Array& input = inputs[i];
      auto block = [this, &input, i, device] {
        return InputBlock(static_cast<int>(i), input, device);
      };
      if (config.functional) {
        const Array values = block();
        engine->WriteHost(v.buffer(), values.data(), values.nbytes());
      } else if (input.has_data()) {
        v.set_host_values(block);  // for scalar prefetch in timing-only runs, sliced on demand
      }
      device_inputs[device].push_back(v);
    }
  }

  RunResult result;
  static_cast<base::RunOutcome&>(result) = engine->Run([&](base::CorePort& port) {
    run.RunDevice(port, body_, device_inputs[port.chip()], out_specs_);
  });
  if (result.ok) {
    const std::string divergence = run.CheckAfterRun();
    if (!divergence.empty()) {
      result.ok = false;
      result.error_kind = ErrorKind::kInvalidArgument;
      result.error = divergence;
    }
  }
  for (int device = 0; device < mesh_.devices(); ++device) {
    result.peak_hbm_bytes.push_back(run.hbm[device]->peak_bytes());
    result.async_wait.push_back(run.devices[device].async_wait);
    if (run.devices[device].end > run.devices[result.critical_device].end)
      result.critical_device = device;
  }
  result.op_times = std::move(run.devices[result.critical_device].op_times);
  if (config.functional && result.ok) {
    for (size_t o = 0; o < out_specs_.size(); ++o) {
      const ShapeDtype block = run.outputs[0][o].type();
      std::vector<Array> per_device;
      for (int device = 0; device < mesh_.devices(); ++device) {
        Array out(block.shape, block.dtype);
        out.bytes() = engine->ReadHost(run.outputs[device][o].buffer());
        per_device.push_back(std::move(out));
      }
      result.outputs.push_back(AssembleOutput(static_cast<int>(o), per_device));
      result.device_outputs.push_back(std::move(per_device));
    }
  }
  run.Detach();
  return result;
}

Array ShardMap::ExpectedBlock(int output, const Array& global, int device) const {
  const auto& spec = out_specs_[output];
  const Shape block = spec.BlockShape(mesh_, global.shape(), "expected output");
  return global.Slice(spec.BlockOffsets(mesh_, global.shape(), device), block);
}

Array ShardMap::InputBlock(int input, const Array& global, int device) const {
  const PartitionSpec& spec = in_specs_[static_cast<size_t>(input)];
  const Shape block = spec.BlockShape(mesh_, global.shape(), InputName(static_cast<size_t>(input)));
  return global.Slice(spec.BlockOffsets(mesh_, global.shape(), device), block);
}

Array ShardMap::AssembleOutput(int output, const std::vector<Array>& blocks) const {
  const PartitionSpec& spec = out_specs_[static_cast<size_t>(output)];
  const Shape global = spec.GlobalShape(mesh_, blocks.at(0).shape());
  Array assembled(global, blocks[0].dtype());
  for (int device = 0; device < mesh_.devices(); ++device) {
    if (spec.IsCanonicalReplica(mesh_, device))
      assembled.Place(blocks[static_cast<size_t>(device)],
                      spec.BlockOffsets(mesh_, global, device));
  }
  return assembled;
}

Comparison CheckAgainstReference(const ShardMap& program, const RunResult& result,
                                 const std::vector<Array>& expected, double rtol, double atol) {
  Comparison c;
  if (result.device_outputs.size() != expected.size()) {
    c.equal = false;
    c.detail = "the run produced " + std::to_string(result.device_outputs.size()) +
               " outputs (none in timing-only mode), expected " + std::to_string(expected.size());
    return c;
  }
  for (size_t o = 0; o < expected.size(); ++o) {
    for (int device = 0; device < program.mesh().devices(); ++device) {
      const Array want = program.ExpectedBlock(static_cast<int>(o), expected[o], device);
      Comparison d = CompareClose(result.device_outputs[o][device], want, rtol, atol);
      if (!d.equal) {
        // One coordinate vector: begin() and end() of two temporaries would be two arrays.
        const std::vector<int> coords = program.mesh().CoordsOf(device);
        d.detail = "output " + std::to_string(o) + " on device " + std::to_string(device) + " " +
                   ShapeString(Shape(coords.begin(), coords.end())) + ": " + d.detail;
        return d;
      }
    }
  }
  return c;
}

}  // namespace tpusim::dsl
