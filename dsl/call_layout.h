#pragma once

// Where each slot of a pallas_call (inputs, outputs, scratch) lives on each device. Only
// the DSL's machinery uses this; kernels see Refs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/core_port.h"
#include "base/run_config.h"
#include "dsl/mesh.h"
#include "dsl/ref.h"

namespace tpusim::dsl {

struct SlotBinding {
  bool semaphore = false;
  base::BufferHandle buffer;    // memory slots
  uint32_t semaphore_base = 0;  // semaphore slots: first of the slot's semaphores
  bool live = true;             // false: a scoped slot that has been freed
  // Scoped slots (Kernel::AllocateScoped): the name, and which allocation it is.
  std::string name;
  uint64_t serial = 0;
};

struct CallLayout {
  const Mesh* mesh = nullptr;
  std::vector<Ref> slots;  // one per slot, unsliced
  // [device * cores + core][slot]: the slots above, then each core's live scoped
  // allocations (run_scoped, pipeline buffers) as a stack. Each TensorCore of a device has
  // its own scratch (its own VMEM and SMEM); operands in HBM are the device's.
  std::vector<std::vector<SlotBinding>> per_device;
  int cores = 1;  // TensorCores per device (base::CorePort::num_cores)
  std::string call_name;
  bool xla_collective = false;  // PallasCall::xla_collective
  // The slot k.barrier_semaphore() returns (-1: the call sets no collective_id) and, by
  // device and core (device * the chip's TensorCores + core), the barrier semaphore of the
  // call's collective_id: each core has its own, as each has its own scratch semaphores
  // (docs/dsl.md, "Megacore"). It exists before a device enters the call, so peers may
  // signal it first: that is what the start barrier is for.
  int barrier_slot = -1;
  std::vector<uint32_t> barrier_semaphores;
  // The run's options: the interpret-mode ones (uninitialized memory, out-of-bounds reads,
  // grid seed) are read here. Never null; owned by whoever runs the call.
  const base::RunConfig* config = nullptr;
};

inline std::vector<SlotBinding>& BindingsOf(CallLayout& layout, int device, int core) {
  return layout.per_device[static_cast<size_t>(device * layout.cores + core)];
}
inline const std::vector<SlotBinding>& BindingsOf(const CallLayout& layout, int device, int core) {
  return layout.per_device[static_cast<size_t>(device * layout.cores + core)];
}

// The barrier semaphore of `core` of `device` (BarrierSemaphores' order).
inline uint32_t BarrierSemaphoreOf(const CallLayout& layout, int device, int core) {
  const size_t cores =
      layout.barrier_semaphores.size() / static_cast<size_t>(layout.mesh->devices());
  return layout.barrier_semaphores[static_cast<size_t>(device) * cores + static_cast<size_t>(core)];
}

// Whether the call's run reads unwritten memory as zero (else NaN or the integer maximum).
inline bool ZeroUninitialized(const CallLayout& layout) {
  return layout.config->uninitialized_memory == base::UninitializedMemory::kZero;
}

// What a fresh buffer of `dtype` reads as: zero, or NaN (integers: the largest value).
base::Uninitialized UninitializedFor(DType dtype, bool zero);

}  // namespace tpusim::dsl
