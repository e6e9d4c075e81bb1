#include "dsl/program/call_instance.h"

#include <charconv>

#include "base/core_port.h"
#include "base/errors.h"
#include "dsl/kernel.h"
#include "dsl/pipeline.h"

namespace tpusim::dsl {

namespace {

base::MemorySpace ToSim(MemorySpace space) {
  switch (space) {
    case MemorySpace::kVmem:
      return base::MemorySpace::kVmem;
    case MemorySpace::kSmem:
      return base::MemorySpace::kSmem;
    default:
      return base::MemorySpace::kHbm;  // ANY scratch: an HBM buffer for the kernel's DMAs
  }
}

base::SemaphoreKind ToSim(SemaphoreType type) {
  switch (type) {
    case SemaphoreType::kDma:
      return base::SemaphoreKind::kDma;
    case SemaphoreType::kRegular:
      return base::SemaphoreKind::kRegular;
    case SemaphoreType::kBarrier:
      return base::SemaphoreKind::kBarrier;
  }
  return base::SemaphoreKind::kRegular;
}

}  // namespace

std::string OperandLabel(const PallasCall& call, bool input, size_t index) {
  const auto& names = input ? call.in_names : call.out_names;
  std::string what = std::string(input ? "input " : "output ") + std::to_string(index);
  if (index < names.size()) what += " ('" + names[index] + "')";
  return what;
}

void CheckPallasCall(const PallasCall& call, size_t inputs) {
  const GridSpec& g = call.grid_spec;
  auto fail = [&](const std::string& what) {
    throw Error(ErrorKind::kInvalidArgument, call.name + ": " + what);
  };
  if (g.num_scalar_prefetch < 0 || static_cast<size_t>(g.num_scalar_prefetch) > inputs) {
    fail("num_scalar_prefetch is " + std::to_string(g.num_scalar_prefetch) + ", but the call has " +
         std::to_string(inputs) +
         " inputs; it counts the leading inputs that are scalar "
         "operands, from 0 to " +
         std::to_string(inputs) + ".");
  }
  const size_t scalars = static_cast<size_t>(g.num_scalar_prefetch);
  if (!g.in_specs.empty() && g.in_specs.size() != inputs - scalars) {
    fail("the GridSpec has " + std::to_string(g.in_specs.size()) + " in_specs but the call has " +
         std::to_string(inputs - scalars) + " inputs" +
         (scalars ? " after its " + std::to_string(scalars) + " scalar-prefetch operands" : "") +
         "; give one BlockSpec per input.");
  }
  if (!g.out_specs.empty() && g.out_specs.size() != call.out_shape.size()) {
    fail("the GridSpec has " + std::to_string(g.out_specs.size()) + " out_specs but the call has " +
         std::to_string(call.out_shape.size()) + " outputs.");
  }
  for (const auto* specs : {&g.in_specs, &g.out_specs}) {
    for (const BlockSpec& spec : *specs) {
      if (spec.scalar_index_map && scalars == 0) {
        fail(
            "an index map reads scalar-prefetch operands, but num_scalar_prefetch is 0; use "
            "PrefetchScalarGridSpec(n, grid_spec) to pass the first n inputs as scalars.");
      }
    }
  }
  if (call.in_names.size() > inputs) {
    fail("in_names gives " + std::to_string(call.in_names.size()) + " names, but the call has " +
         std::to_string(inputs) +
         " inputs (scalar-prefetch operands included); give at most one name per input.");
  }
  if (call.out_names.size() > call.out_shape.size()) {
    fail("out_names gives " + std::to_string(call.out_names.size()) + " names, but the call has " +
         std::to_string(call.out_shape.size()) + " outputs; give at most one name per output.");
  }
  if (g.grid.empty()) fail("the grid is empty; use {1} for one step.");
  for (int n : g.grid) {
    if (n <= 0) fail("every grid dimension must be at least 1, got " + std::to_string(n) + ".");
  }
  const CompilerParams& params = call.compiler_params;
  if (params.collective_id && *params.collective_id < 0) {
    fail("collective_id is " + std::to_string(*params.collective_id) +
         "; collective ids are non-negative integers.");
  }
  std::vector<int> aliased_by(call.out_shape.size(), -1);
  for (const auto& [in, out] : call.input_output_aliases) {
    const std::string pair =
        "input_output_aliases {" + std::to_string(in) + ": " + std::to_string(out) + "}";
    if (in < 0 || static_cast<size_t>(in) >= inputs) {
      fail(pair + " names input " + std::to_string(in) + ", but the call has " +
           std::to_string(inputs) + " inputs (scalar-prefetch operands included); use 0 to " +
           std::to_string(static_cast<int64_t>(inputs) - 1) + ".");
    }
    if (out < 0 || static_cast<size_t>(out) >= call.out_shape.size()) {
      fail(pair + " names output " + std::to_string(out) + ", but the call has " +
           std::to_string(call.out_shape.size()) + " outputs.");
    }
    if (aliased_by[out] >= 0) {
      fail(pair + " aliases output " + std::to_string(out) + " a second time (input " +
           std::to_string(aliased_by[out]) +
           " already is it); an output can be one input's "
           "buffer only.");
    }
    aliased_by[out] = in;
  }
  const auto& semantics = params.dimension_semantics;
  if (semantics.empty()) return;
  if (semantics.size() != g.grid.size()) {
    fail("dimension_semantics names " + std::to_string(semantics.size()) +
         " axes but the grid has " + std::to_string(g.grid.size()) + ".");
  }
  for (const auto& s : semantics) {
    if (s != "parallel" && s != "core_parallel" && s != "arbitrary") {
      fail("dimension_semantics '" + s +
           "' is none of \"parallel\", \"core_parallel\" and \"arbitrary\".");
    }
  }
}

void CheckAliasTypes(const PallasCall& call, const std::vector<ShapeDtype>& inputs) {
  for (const auto& [in, out] : call.input_output_aliases) {
    const ShapeDtype& a = inputs.at(static_cast<size_t>(in));
    const ShapeDtype& b = call.out_shape.at(static_cast<size_t>(out));
    if (a.shape == b.shape && a.dtype == b.dtype) continue;
    throw Error(ErrorKind::kInvalidArgument,
                call.name + ": input_output_aliases {" + std::to_string(in) + ": " +
                    std::to_string(out) + "} makes " + OperandLabel(call, false, out) + " (" +
                    TypeString(b.dtype, b.shape) + ") the buffer of " +
                    OperandLabel(call, true, in) + " (" + TypeString(a.dtype, a.shape) +
                    "); an aliased pair must have the same shape and dtype. Fix out_shape, or "
                    "drop the alias.");
  }
}

const base::RunConfig CallInstance::kDefaultConfig;

CallInstance::CallInstance(const Mesh& mesh, PallasCall call, const std::vector<ShapeDtype>& inputs,
                           std::vector<uint32_t> barrier_semaphores, const base::RunConfig& config)
    : call_(std::move(call)) {
  CheckPallasCall(call_, inputs.size());
  CheckAliasTypes(call_, inputs);
  auto operand_name = [&](bool input, size_t i) {
    const auto& names = input ? call_.in_names : call_.out_names;
    if (i < names.size()) return names[i];
    return std::string(input ? "in" : "out") + std::to_string(i);
  };
  layout_.mesh = &mesh;
  layout_.call_name = call_.name;
  layout_.xla_collective = call_.xla_collective;
  layout_.config = &config;
  auto add_slot = [&](const std::string& name, const Shape& shape, DType dtype, MemorySpace space,
                      SemaphoreType type = SemaphoreType::kDma) {
    layout_.slots.push_back(
        Ref::Make(static_cast<int>(layout_.slots.size()), name, shape, dtype, space, type));
    layout_.slots.back().AllowOutOfBoundsViews(config.out_of_bounds_reads ==
                                               base::OutOfBoundsReads::kUninitialized);
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
  scratch_end_ = layout_.slots.size();
  if (call_.compiler_params.collective_id) {
    layout_.barrier_slot = static_cast<int>(layout_.slots.size());
    layout_.barrier_semaphores = std::move(barrier_semaphores);
    add_slot("barrier_semaphore", {}, DType::kInt32, MemorySpace::kSemaphore,
             SemaphoreType::kBarrier);
  }
  // Scalar prefetch: each scalar operand's SMEM copy, and the semaphore of those copies.
  scalar_count_ = static_cast<size_t>(call_.grid_spec.num_scalar_prefetch);
  scalar_smem_begin_ = layout_.slots.size();
  for (size_t i = 0; i < scalar_count_; ++i)
    add_slot(operand_name(true, i), inputs[i].shape, inputs[i].dtype, MemorySpace::kSmem);
  if (scalar_count_ > 0) add_slot("scalar prefetch", {}, DType::kInt32, MemorySpace::kSemaphore);
  layout_.per_device.resize(mesh.devices());
  layout_.bound.resize(static_cast<size_t>(mesh.devices()) * BoundLinesPerCore(layout_));

  // Inputs and outputs with VMEM/SMEM BlockSpecs are pipelined over the grid; ANY operands
  // pass through. Empty spec lists mean every operand is ANY. Scalar operands are not
  // pipelined: the kernel gets their SMEM copies.
  const GridSpec& g = call_.grid_spec;
  std::vector<PipelineOperand> operands;
  for (size_t i = scalar_count_; i < operand_count_; ++i) {
    const bool input = i < inputs.size();
    const size_t index = input ? i : i - inputs.size();
    const size_t spec_index = input ? i - scalar_count_ : index;
    const auto& specs = input ? g.in_specs : g.out_specs;
    operands.push_back(PipelineOperand{layout_.slots[i],
                                       specs.empty() ? BlockSpec::Any() : specs[spec_index], !input,
                                       OperandLabel(call_, input, index)});
  }
  pipeline_ = std::make_unique<GridPipeline>(call_.name, g.grid, std::move(operands),
                                             ErrorKind::kInvalidArgument);
  if (config.grid_seed) {
    pipeline_->ShuffleParallelDims(call_.compiler_params.dimension_semantics, *config.grid_seed);
  }
}

CallInstance::~CallInstance() = default;

std::vector<Array> CallInstance::PrefetchScalars(
    Kernel& kernel, const std::vector<std::optional<Array>>& host_values) {
  std::vector<Array> values;
  if (scalar_count_ == 0) return values;
  auto scope = kernel.named_scope("scalar prefetch");
  const Ref& sem = layout_.slots[scalar_smem_begin_ + scalar_count_];
  std::vector<AsyncCopy> copies;
  for (size_t i = 0; i < scalar_count_; ++i) {
    copies.push_back(
        kernel.async_copy(layout_.slots[i], layout_.slots[scalar_smem_begin_ + i], sem));
    copies.back().start();
  }
  for (AsyncCopy& copy : copies)
    copy.wait();
  for (size_t i = 0; i < scalar_count_; ++i) {
    if (kernel.port().functional()) {
      values.push_back(kernel.load(layout_.slots[scalar_smem_begin_ + i]));
    } else if (i < host_values.size() && host_values[i]) {
      values.push_back(*host_values[i]);
    } else {
      throw Error(ErrorKind::kInvalidArgument,
                  call_.name + ": scalar-prefetch " + OperandLabel(call_, true, i) +
                      " has no values in this timing-only run (a placeholder, or computed by "
                      "the program), but index maps read its values; pass it as a program "
                      "input with real data, or run functionally.");
    }
  }
  return values;
}

void CallInstance::Run(base::CorePort& port, const std::vector<base::BufferHandle>& operands,
                       const std::vector<std::optional<Array>>& scalar_values) {
  const int cores = port.num_cores();
  if (layout_.cores != cores) {  // the first device to enter: nothing is bound yet
    layout_.cores = cores;
    layout_.per_device.resize(static_cast<size_t>(layout_.mesh->devices() * cores));
    layout_.bound.resize(layout_.per_device.size() * BoundLinesPerCore(layout_));
  }
  const GridSpec& g = call_.grid_spec;
  const auto& semantics = call_.compiler_params.dimension_semantics;
  if (cores == 1 || CoreShare(g.grid, semantics, 0, cores).axis < 0) {
    RunOnCore(port, operands, scalar_values, GridShare{});
    return;
  }
  // Megacore: every core runs its share of the grid with its own scratch, as Mosaic splits
  // the leading parallel axis; the call ends when every core has finished its share.
  std::vector<base::CorePort::ActivityId> others;
  for (int core = 1; core < cores; ++core) {
    const GridShare share = CoreShare(g.grid, semantics, core, cores);
    others.push_back(port.SpawnOnCore(core, call_.name,
                                      [this, &operands, &scalar_values, share](base::CorePort& on) {
                                        RunOnCore(on, operands, scalar_values, share);
                                      }));
  }
  RunOnCore(port, operands, scalar_values, CoreShare(g.grid, semantics, 0, cores));
  for (const auto id : others)
    port.Join(id);
}

void CallInstance::RunOnCore(base::CorePort& port, const std::vector<base::BufferHandle>& operands,
                             const std::vector<std::optional<Array>>& scalar_values,
                             const GridShare& share) {
  const int device = static_cast<int>(port.chip());
  auto& bindings = BindingsOf(layout_, device, port.core_index());
  for (const Ref& slot : layout_.slots) {
    SlotBinding binding;
    const size_t index = bindings.size();
    if (index < operand_count_) {
      binding.buffer = operands[index];
    } else if (static_cast<int>(index) == layout_.barrier_slot) {
      binding.semaphore = true;
      binding.semaphore_base = BarrierSemaphoreOf(layout_, device, port.core_index());
    } else if (slot.is_semaphore()) {
      binding.semaphore = true;
      // "name[j]", written into one string: a pod's devices name hundreds of thousands of
      // semaphores, and a string made per name (and per part) was most of the instructions.
      const bool array = !slot.shape().empty();
      std::string name = slot.name();
      if (array) name += '[';
      const size_t prefix = name.size();
      const int64_t count = slot.size();
      for (int64_t j = 0; j < count; ++j) {
        if (array) {
          char digits[24];
          const auto end = std::to_chars(digits, digits + sizeof digits, j).ptr;
          name.resize(prefix);
          name.append(digits, end);
          name += ']';
        }
        const auto handle = port.AddSemaphore(ToSim(slot.semaphore_type()), name);
        if (j == 0) binding.semaphore_base = handle.index;
      }
    } else {
      binding.buffer = port.Allocate(ToSim(slot.memory_space()), slot.nbytes(),
                                     slot.name() + " " + TypeString(slot.dtype(), slot.shape()),
                                     UninitializedFor(slot.dtype(), ZeroUninitialized(layout_)));
    }
    BoundSlot& bound = BoundOf(layout_, device, port.core_index(), index);
    bound.index = binding.semaphore ? binding.semaphore_base : binding.buffer.index;
    bound.core = static_cast<uint16_t>(binding.buffer.core);
    bound.space = static_cast<uint8_t>(binding.buffer.space);
    // Bound here: a semaphore, or a buffer on this device whose core number fits the 16 bits.
    bound.state = binding.semaphore || (binding.buffer.chip == static_cast<base::ChipId>(device) &&
                                        binding.buffer.core == bound.core)
                      ? BoundSlot::kBound
                      : BoundSlot::kElsewhere;
    bindings.push_back(binding);
  }
  port.YieldToSameTime();
  // Every pallas_call is launched on the core, as every XLA op is (docs/time-model.md).
  port.Execute(base::KernelLaunch{}, "launch " + call_.name);

  const GridSpec& g = call_.grid_spec;
  Kernel kernel(port, layout_, g.grid, call_.name);
  kernel.set_dimension_semantics(call_.compiler_params.dimension_semantics);
  const std::vector<Array> scalars = PrefetchScalars(kernel, scalar_values);
  // The kernel's refs, as Pallas orders them: scalars (in SMEM), inputs, outputs, scratch.
  const auto slot = [&](size_t i) {
    return layout_.slots.begin() + static_cast<std::ptrdiff_t>(i);
  };
  const Refs scalar_refs(slot(scalar_smem_begin_), slot(scalar_smem_begin_ + scalar_count_));
  const Refs scratch_refs(slot(operand_count_), slot(scratch_end_));
  Refs refs;
  pipeline_->Run(
      kernel,
      [&](const std::vector<int>& ids, const Refs& operand_refs) {
        kernel.set_program_ids(ids);
        refs.assign(scalar_refs.begin(), scalar_refs.end());
        refs.insert(refs.end(), operand_refs.begin(), operand_refs.end());
        refs.insert(refs.end(), scratch_refs.begin(), scratch_refs.end());
        kernel.set_operands(refs);
        call_.kernel(kernel, refs);
      },
      "step", scalars, share);
  for (size_t i = layout_.slots.size(); i < bindings.size(); ++i) {
    if (!bindings[i].live) continue;
    throw Error(ErrorKind::kKernelMisuse,
                std::string("scoped ") + (bindings[i].semaphore ? "semaphore" : "buffer") + " '" +
                    bindings[i].name + "' (AllocateScoped) is still allocated when pallas_call '" +
                    call_.name + "' ends on device " + std::to_string(device) +
                    "; free it with FreeScoped before the kernel returns (run_scoped frees its "
                    "buffers itself).");
  }

  // Leaving the call: its scratch buffers go, and copies into them are errors. A buffer a
  // DMA still writes stays allocated: that DMA's semaphore is then not zero when the run
  // ends, and that report names the missing wait. Semaphores live on, so a late signal
  // shows in the same report.
  for (size_t i = operand_count_; i < layout_.slots.size(); ++i) {
    SlotBinding& binding = bindings[i];
    if (binding.semaphore) continue;
    binding.live = false;
    BoundOf(layout_, device, port.core_index(), i).state = BoundSlot::kUnbound;
    try {
      port.Free(binding.buffer);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kRace) throw;
    }
  }
}

}  // namespace tpusim::dsl
