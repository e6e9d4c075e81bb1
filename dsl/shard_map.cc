#include "dsl/shard_map.h"

#include "dsl/call_layout.h"
#include "dsl/pipeline.h"
#include "sim/core_port.h"

namespace tpusim::dsl {

namespace {

sim::MemorySpace ToSim(MemorySpace space) {
  switch (space) {
    case MemorySpace::kVmem:
      return sim::MemorySpace::kVmem;
    case MemorySpace::kSmem:
      return sim::MemorySpace::kSmem;
    default:
      return sim::MemorySpace::kHbm;
  }
}

sim::SemaphoreKind ToSim(SemaphoreType type) {
  switch (type) {
    case SemaphoreType::kDma:
      return sim::SemaphoreKind::kDma;
    case SemaphoreType::kRegular:
      return sim::SemaphoreKind::kRegular;
    case SemaphoreType::kBarrier:
      return sim::SemaphoreKind::kBarrier;
  }
  return sim::SemaphoreKind::kRegular;
}

}  // namespace

PallasCall pallas_call(std::string name, KernelFn kernel, GridSpec grid_spec,
                       std::vector<ShapeDtype> out_shape) {
  PallasCall call;
  call.name = std::move(name);
  call.kernel = std::move(kernel);
  call.grid_spec = std::move(grid_spec);
  call.out_shape = std::move(out_shape);
  return call;
}

ShardMap::ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call)
    : mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)),
      call_(std::move(call)) {
  const GridSpec& g = call_.grid_spec;
  if (out_specs_.size() != call_.out_shape.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                call_.name + ": shard_map has " + std::to_string(out_specs_.size()) +
                    " out_specs but the pallas_call has " + std::to_string(call_.out_shape.size()) +
                    " outputs; give one PartitionSpec per output.");
  }
  for (size_t o = 0; o < out_specs_.size(); ++o) {
    const Shape& block = call_.out_shape[o].shape;
    if (out_specs_[o].entries().size() > block.size()) {
      throw Error(ErrorKind::kInvalidArgument, call_.name + ": out_specs[" + std::to_string(o) +
                                                   "] " + out_specs_[o].Describe() + " names " +
                                                   std::to_string(out_specs_[o].entries().size()) +
                                                   " dimensions, but output " + std::to_string(o) +
                                                   " has rank " + std::to_string(block.size()) +
                                                   " (block shape " + ShapeString(block) +
                                                   "); give at most one entry per dimension.");
    }
    for (const auto& entry : out_specs_[o].entries()) {
      for (const auto& axis : entry.axes)
        mesh_.AxisIndex(axis);  // throws, naming the mesh's axes
    }
  }
  if (!g.in_specs.empty() && g.in_specs.size() != in_specs_.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                call_.name + ": the GridSpec has " + std::to_string(g.in_specs.size()) +
                    " in_specs but shard_map has " + std::to_string(in_specs_.size()) + " inputs.");
  }
  if (!g.out_specs.empty() && g.out_specs.size() != call_.out_shape.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                call_.name + ": the GridSpec has " + std::to_string(g.out_specs.size()) +
                    " out_specs but the call has " + std::to_string(call_.out_shape.size()) +
                    " outputs.");
  }
  if (g.grid.empty()) {
    throw Error(ErrorKind::kInvalidArgument,
                call_.name + ": the grid is empty; use {1} for one step.");
  }
  for (int n : g.grid) {
    if (n <= 0) {
      throw Error(
          ErrorKind::kInvalidArgument,
          call_.name + ": every grid dimension must be at least 1, got " + std::to_string(n) + ".");
    }
  }
  if (!g.dimension_semantics.empty()) {
    if (g.dimension_semantics.size() != g.grid.size()) {
      throw Error(ErrorKind::kInvalidArgument, call_.name + ": dimension_semantics names " +
                                                   std::to_string(g.dimension_semantics.size()) +
                                                   " axes but the grid has " +
                                                   std::to_string(g.grid.size()) + ".");
    }
    for (const auto& s : g.dimension_semantics) {
      if (s != "parallel" && s != "arbitrary") {
        throw Error(ErrorKind::kInvalidArgument,
                    call_.name + ": dimension_semantics '" + s +
                        "' is neither \"parallel\" nor \"arbitrary\".");
      }
    }
  }
  // BlockSpecs are checked against the operands' shapes in Run (GridPipeline).
}

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call) {
  return ShardMap(mesh, std::move(in_specs), std::move(out_specs), std::move(call));
}

RunResult ShardMap::Run(const std::vector<Array>& inputs, const RunOptions& options) const {
  if (inputs.size() != in_specs_.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                call_.name + " takes " + std::to_string(in_specs_.size()) + " inputs, got " +
                    std::to_string(inputs.size()) + ".");
  }
  auto operand_name = [&](bool input, size_t i) {
    const auto& names = input ? call_.in_names : call_.out_names;
    if (i < names.size()) return names[i];
    return std::string(input ? "in" : "out") + std::to_string(i);
  };
  std::vector<Shape> in_blocks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (options.functional && !inputs[i].has_data()) {
      throw Error(ErrorKind::kInvalidArgument,
                  call_.name + ": input " + operand_name(true, i) +
                      " is a placeholder without data; functional runs need real inputs.");
    }
    in_blocks.push_back(
        in_specs_[i].BlockShape(mesh_, inputs[i].shape(), "input " + operand_name(true, i)));
  }

  sim::SystemOptions system_options;
  system_options.functional = options.functional;
  system_options.time_limit = options.time_limit;
  system_options.trace = options.trace;
  system_options.chip_slowdown = options.chip_slowdown;
  system_options.race_check = options.race_check;
  sim::System system(mesh_.topology(), system_options);

  CallLayout layout;
  layout.mesh = &mesh_;
  layout.zero_uninitialized = options.uninitialized_memory == UninitializedMemory::kZero;
  for (size_t i = 0; i < inputs.size(); ++i) {
    layout.slots.push_back(Ref::Make(static_cast<int>(layout.slots.size()), operand_name(true, i),
                                     in_blocks[i], inputs[i].dtype(), MemorySpace::kAny));
  }
  for (size_t i = 0; i < call_.out_shape.size(); ++i) {
    layout.slots.push_back(Ref::Make(static_cast<int>(layout.slots.size()), operand_name(false, i),
                                     call_.out_shape[i].shape, call_.out_shape[i].dtype,
                                     MemorySpace::kAny));
  }
  const auto& scratch = call_.grid_spec.scratch_shapes;
  for (size_t i = 0; i < scratch.size(); ++i) {
    const std::string name =
        scratch[i].name.empty() ? "scratch" + std::to_string(i) : scratch[i].name;
    layout.slots.push_back(Ref::Make(static_cast<int>(layout.slots.size()), name, scratch[i].shape,
                                     scratch[i].dtype, scratch[i].memory_space,
                                     scratch[i].semaphore_type));
  }
  layout.barrier_slot = static_cast<int>(layout.slots.size());
  layout.slots.push_back(Ref::Make(layout.barrier_slot, "barrier_semaphore", {}, DType::kInt32,
                                   MemorySpace::kSemaphore, SemaphoreType::kBarrier));

  // Inputs and outputs with VMEM/SMEM BlockSpecs are pipelined over the grid; ANY operands
  // pass through. Empty spec lists mean every operand is ANY.
  const GridSpec& g = call_.grid_spec;
  std::vector<PipelineOperand> operands;
  for (size_t i = 0; i < inputs.size() + call_.out_shape.size(); ++i) {
    const bool input = i < inputs.size();
    const size_t index = input ? i : i - inputs.size();
    const auto& specs = input ? g.in_specs : g.out_specs;
    const auto& names = input ? call_.in_names : call_.out_names;
    std::string what = std::string(input ? "input " : "output ") + std::to_string(index);
    if (index < names.size()) what += " ('" + names[index] + "')";
    operands.push_back(PipelineOperand{
        layout.slots[i], specs.empty() ? BlockSpec::Any() : specs[index], !input, std::move(what)});
  }
  const size_t operand_count = operands.size();
  GridPipeline pipeline(call_.name, g.grid, std::move(operands), ErrorKind::kInvalidArgument);
  if (options.grid_seed) pipeline.ShuffleParallelDims(g.dimension_semantics, *options.grid_seed);

  layout.per_device.resize(mesh_.devices());
  for (int device = 0; device < mesh_.devices(); ++device) {
    const auto chip = static_cast<sim::ChipId>(device);
    auto& bindings = layout.per_device[device];
    for (const Ref& slot : layout.slots) {
      SlotBinding binding;
      if (slot.is_semaphore()) {
        binding.semaphore = true;
        const auto kind = ToSim(slot.semaphore_type());
        const int64_t count = slot.size();
        for (int64_t j = 0; j < count; ++j) {
          const std::string name =
              slot.shape().empty() ? slot.name() : slot.name() + "[" + std::to_string(j) + "]";
          const auto handle = system.AddSemaphore(chip, kind, name);
          if (j == 0) binding.semaphore_base = handle.index;
        }
      } else {
        binding.buffer = system.Allocate(chip, ToSim(slot.memory_space()), slot.nbytes(),
                                         slot.name() + " " + TypeString(slot.dtype(), slot.shape()),
                                         UninitializedFor(slot.dtype(), layout.zero_uninitialized));
      }
      bindings.push_back(binding);
    }
    if (options.functional) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        const Array block = inputs[i].Slice(
            in_specs_[i].BlockOffsets(mesh_, inputs[i].shape(), device), in_blocks[i]);
        system.WriteHost(bindings[i].buffer, block.data(), block.nbytes());
      }
    }
  }

  const Refs scratch_refs(layout.slots.begin() + static_cast<std::ptrdiff_t>(operand_count),
                          layout.slots.begin() + layout.barrier_slot);
  sim::RunOutcome outcome = system.Run([&](sim::CorePort& port) {
    Kernel kernel(port, layout, g.grid);
    kernel.set_dimension_semantics(g.dimension_semantics);
    Refs refs;
    pipeline.Run(
        kernel,
        [&](const std::vector<int>& ids, const Refs& operand_refs) {
          kernel.set_program_ids(ids);
          refs.assign(operand_refs.begin(), operand_refs.end());
          refs.insert(refs.end(), scratch_refs.begin(), scratch_refs.end());
          call_.kernel(kernel, refs);
        },
        "step");
  });

  RunResult result;
  result.ok = outcome.ok;
  result.error_kind = outcome.error_kind;
  result.error = outcome.error;
  result.stats = std::move(outcome.stats);
  if (!options.functional) return result;

  const size_t first_output = inputs.size();
  for (size_t o = 0; o < call_.out_shape.size(); ++o) {
    const ShapeDtype& block = call_.out_shape[o];
    std::vector<Array> per_device;
    Shape global = block.shape;
    for (size_t d = 0; d < out_specs_[o].entries().size() && d < global.size(); ++d) {
      for (const auto& axis : out_specs_[o].entries()[d].axes)
        global[d] *= mesh_.AxisSize(axis);
    }
    Array assembled(global, block.dtype);
    for (int device = 0; device < mesh_.devices(); ++device) {
      Array out(block.shape, block.dtype);
      out.bytes() = system.ReadHost(layout.per_device[device][first_output + o].buffer);
      if (out_specs_[o].IsCanonicalReplica(mesh_, device)) {
        assembled.Place(out, out_specs_[o].BlockOffsets(mesh_, global, device));
      }
      per_device.push_back(std::move(out));
    }
    result.outputs.push_back(std::move(assembled));
    result.device_outputs.push_back(std::move(per_device));
  }
  return result;
}

Array ShardMap::ExpectedBlock(int output, const Array& global, int device) const {
  const auto& spec = out_specs_[output];
  const Shape block = spec.BlockShape(mesh_, global.shape(), "expected output");
  return global.Slice(spec.BlockOffsets(mesh_, global.shape(), device), block);
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
