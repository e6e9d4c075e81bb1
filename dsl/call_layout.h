#pragma once

// Where each slot of a pallas_call (inputs, outputs, scratch) lives on each device. Only
// the DSL's machinery uses this; kernels see Refs.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

// One of the call's own slots (`slots` below) on one core of one device, as every DMA's
// lookups read it: a remote copy reads its peer's destination and receive semaphore, a
// pod's peer is out of the cache, and through per_device that was its vector's header, then
// each SlotBinding (72 bytes, a line or two each). Here a core's slots lie side by side, 8
// bytes each, in lines of their own (BoundLine): a copy's lookups on one device take a line.
struct BoundSlot {
  enum State : uint8_t {
    kUnbound,   // the device has not entered the call, or has left it (buffers)
    kBound,     // `index` etc. are the binding; a buffer is on the slot's own device
    kElsewhere  // bound, to a buffer on another chip: per_device has it
  };
  uint32_t index = 0;  // the buffer's index, or the slot's first semaphore (semaphore slots)
  uint16_t core = 0;   // the buffer's TensorCore
  uint8_t space = 0;   // the buffer's base::MemorySpace
  State state = kUnbound;
};
struct alignas(64) BoundLine {
  static constexpr size_t kSlots = 8;
  BoundSlot slot[kSlots];
};
static_assert(sizeof(BoundLine) == 64, "a line of the cache");

struct CallLayout {
  const Mesh* mesh = nullptr;
  std::vector<Ref> slots;  // one per slot, unsliced
  // The slots above as per_device holds them, kept up to date with it by CallInstance;
  // the DMA's lookups read these (BoundOf).
  std::vector<BoundLine> bound;
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
// The lines of `bound` per core: slots.size() slots, rounded up.
inline size_t BoundLinesPerCore(const CallLayout& layout) {
  return (layout.slots.size() + BoundLine::kSlots - 1) / BoundLine::kSlots;
}
// The call's own slot `slot` (< slots.size()) on `core` of `device`.
inline const BoundSlot& BoundOf(const CallLayout& layout, int device, int core, size_t slot) {
  const size_t line = static_cast<size_t>(device * layout.cores + core) * BoundLinesPerCore(layout);
  return layout.bound[line + slot / BoundLine::kSlots].slot[slot % BoundLine::kSlots];
}
inline BoundSlot& BoundOf(CallLayout& layout, int device, int core, size_t slot) {
  return const_cast<BoundSlot&>(BoundOf(std::as_const(layout), device, core, slot));
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
