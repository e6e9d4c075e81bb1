#include "dsl/program/call_instance.h"

#include "dsl/kernel.h"
#include "dsl/pipeline.h"
#include "sim/core_port.h"
#include "sim/errors.h"

namespace tpusim::dsl {

namespace {

sim::MemorySpace ToSim(MemorySpace space) {
  switch (space) {
    case MemorySpace::kVmem:
      return sim::MemorySpace::kVmem;
    case MemorySpace::kSmem:
      return sim::MemorySpace::kSmem;
    default:
      return sim::MemorySpace::kHbm;  // ANY scratch: an HBM buffer for the kernel's DMAs
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

void CheckPallasCall(const PallasCall& call, size_t inputs) {
  const GridSpec& g = call.grid_spec;
  if (!g.in_specs.empty() && g.in_specs.size() != inputs) {
    throw Error(ErrorKind::kInvalidArgument,
                call.name + ": the GridSpec has " + std::to_string(g.in_specs.size()) +
                    " in_specs but the call has " + std::to_string(inputs) + " inputs.");
  }
  if (!g.out_specs.empty() && g.out_specs.size() != call.out_shape.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                call.name + ": the GridSpec has " + std::to_string(g.out_specs.size()) +
                    " out_specs but the call has " + std::to_string(call.out_shape.size()) +
                    " outputs.");
  }
  if (g.grid.empty()) {
    throw Error(ErrorKind::kInvalidArgument,
                call.name + ": the grid is empty; use {1} for one step.");
  }
  for (int n : g.grid) {
    if (n <= 0) {
      throw Error(
          ErrorKind::kInvalidArgument,
          call.name + ": every grid dimension must be at least 1, got " + std::to_string(n) + ".");
    }
  }
  if (g.dimension_semantics.empty()) return;
  if (g.dimension_semantics.size() != g.grid.size()) {
    throw Error(ErrorKind::kInvalidArgument, call.name + ": dimension_semantics names " +
                                                 std::to_string(g.dimension_semantics.size()) +
                                                 " axes but the grid has " +
                                                 std::to_string(g.grid.size()) + ".");
  }
  for (const auto& s : g.dimension_semantics) {
    if (s != "parallel" && s != "arbitrary") {
      throw Error(ErrorKind::kInvalidArgument, call.name + ": dimension_semantics '" + s +
                                                   "' is neither \"parallel\" nor \"arbitrary\".");
    }
  }
}

CallInstance::CallInstance(const Mesh& mesh, PallasCall call, const std::vector<ShapeDtype>& inputs,
                           bool zero_uninitialized, std::optional<uint64_t> grid_seed)
    : call_(std::move(call)) {
  CheckPallasCall(call_, inputs.size());
  auto operand_name = [&](bool input, size_t i) {
    const auto& names = input ? call_.in_names : call_.out_names;
    if (i < names.size()) return names[i];
    return std::string(input ? "in" : "out") + std::to_string(i);
  };
  layout_.mesh = &mesh;
  layout_.zero_uninitialized = zero_uninitialized;
  layout_.grid_seed = grid_seed;
  auto add_slot = [&](const std::string& name, const Shape& shape, DType dtype, MemorySpace space,
                      SemaphoreType type = SemaphoreType::kDma) {
    layout_.slots.push_back(
        Ref::Make(static_cast<int>(layout_.slots.size()), name, shape, dtype, space, type));
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    add_slot(operand_name(true, i), inputs[i].shape, inputs[i].dtype, MemorySpace::kAny);
  for (size_t i = 0; i < call_.out_shape.size(); ++i) {
    add_slot(operand_name(false, i), call_.out_shape[i].shape, call_.out_shape[i].dtype,
             MemorySpace::kAny);
  }
  operand_count_ = layout_.slots.size();
  const auto& scratch = call_.grid_spec.scratch_shapes;
  for (size_t i = 0; i < scratch.size(); ++i) {
    add_slot(scratch[i].name.empty() ? "scratch" + std::to_string(i) : scratch[i].name,
             scratch[i].shape, scratch[i].dtype, scratch[i].memory_space,
             scratch[i].semaphore_type);
  }
  layout_.barrier_slot = static_cast<int>(layout_.slots.size());
  add_slot("barrier_semaphore", {}, DType::kInt32, MemorySpace::kSemaphore,
           SemaphoreType::kBarrier);
  layout_.per_device.resize(mesh.devices());

  // Inputs and outputs with VMEM/SMEM BlockSpecs are pipelined over the grid; ANY operands
  // pass through. Empty spec lists mean every operand is ANY.
  const GridSpec& g = call_.grid_spec;
  std::vector<PipelineOperand> operands;
  for (size_t i = 0; i < operand_count_; ++i) {
    const bool input = i < inputs.size();
    const size_t index = input ? i : i - inputs.size();
    const auto& specs = input ? g.in_specs : g.out_specs;
    const auto& names = input ? call_.in_names : call_.out_names;
    std::string what = std::string(input ? "input " : "output ") + std::to_string(index);
    if (index < names.size()) what += " ('" + names[index] + "')";
    operands.push_back(PipelineOperand{layout_.slots[i],
                                       specs.empty() ? BlockSpec::Any() : specs[index], !input,
                                       std::move(what)});
  }
  pipeline_ = std::make_unique<GridPipeline>(call_.name, g.grid, std::move(operands),
                                             ErrorKind::kInvalidArgument);
  if (grid_seed) pipeline_->ShuffleParallelDims(g.dimension_semantics, *grid_seed);
}

CallInstance::~CallInstance() = default;

void CallInstance::Run(sim::CorePort& port, const std::vector<sim::BufferHandle>& operands,
                       uint32_t barrier_semaphore) {
  const int device = static_cast<int>(port.chip());
  auto& bindings = layout_.per_device[device];
  for (const Ref& slot : layout_.slots) {
    SlotBinding binding;
    const size_t index = bindings.size();
    if (index < operand_count_) {
      binding.buffer = operands[index];
    } else if (static_cast<int>(index) == layout_.barrier_slot) {
      binding.semaphore = true;
      binding.semaphore_base = barrier_semaphore;
    } else if (slot.is_semaphore()) {
      binding.semaphore = true;
      for (int64_t j = 0; j < slot.size(); ++j) {
        const std::string name =
            slot.shape().empty() ? slot.name() : slot.name() + "[" + std::to_string(j) + "]";
        const auto handle = port.AddSemaphore(ToSim(slot.semaphore_type()), name);
        if (j == 0) binding.semaphore_base = handle.index;
      }
    } else {
      binding.buffer = port.Allocate(ToSim(slot.memory_space()), slot.nbytes(),
                                     slot.name() + " " + TypeString(slot.dtype(), slot.shape()),
                                     UninitializedFor(slot.dtype(), layout_.zero_uninitialized));
    }
    bindings.push_back(binding);
  }
  port.YieldToSameTime();

  const GridSpec& g = call_.grid_spec;
  const Refs scratch_refs(layout_.slots.begin() + static_cast<std::ptrdiff_t>(operand_count_),
                          layout_.slots.begin() + layout_.barrier_slot);
  Kernel kernel(port, layout_, g.grid);
  kernel.set_dimension_semantics(g.dimension_semantics);
  Refs refs;
  pipeline_->Run(
      kernel,
      [&](const std::vector<int>& ids, const Refs& operand_refs) {
        kernel.set_program_ids(ids);
        refs.assign(operand_refs.begin(), operand_refs.end());
        refs.insert(refs.end(), scratch_refs.begin(), scratch_refs.end());
        call_.kernel(kernel, refs);
      },
      "step");

  // Leaving the call: its scratch buffers go, and copies into them are errors. A buffer a
  // DMA still writes stays allocated: that DMA's semaphore is then not zero when the run
  // ends, and that report names the missing wait. Semaphores live on, so a late signal
  // shows in the same report.
  for (size_t i = operand_count_; i < layout_.slots.size(); ++i) {
    SlotBinding& binding = bindings[i];
    if (binding.semaphore) continue;
    binding.live = false;
    try {
      port.Free(binding.buffer);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kRace) throw;
    }
  }
}

}  // namespace tpusim::dsl
