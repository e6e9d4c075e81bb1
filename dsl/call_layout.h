#pragma once

// Where each slot of a pallas_call (inputs, outputs, scratch) lives on each device. Only
// the DSL's machinery uses this; kernels see Refs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/core_port.h"
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

// Pallas interpret mode's options a call follows (RunOptions, docs/references.md §5).
struct InterpretOptions {
  bool zero_uninitialized = false;  // uninitialized_memory is kZero
  // out_of_bounds_reads is kUninitialized: a read of a slice past its ref's shape gets
  // the uninitialized value there instead of raising.
  bool uninitialized_out_of_bounds_reads = false;
  std::optional<uint64_t> grid_seed;  // for emit_pipeline's grids too
};

struct CallLayout {
  const Mesh* mesh = nullptr;
  std::vector<Ref> slots;  // one per slot, unsliced
  // [device][slot]: the slots above, then each device's live scoped allocations (run_scoped,
  // pipeline buffers) as a stack.
  std::vector<std::vector<SlotBinding>> per_device;
  std::string call_name;
  // The slot k.barrier_semaphore() returns (-1: the call sets no collective_id) and, by
  // device, the barrier semaphore of the call's collective_id. It exists before a device
  // enters the call, so peers may signal it first: that is what the start barrier is for.
  int barrier_slot = -1;
  std::vector<uint32_t> barrier_semaphores;
  InterpretOptions interpret;
};

// What a fresh buffer of `dtype` reads as: zero, or NaN (integers: the largest value).
base::Uninitialized UninitializedFor(DType dtype, bool zero);

}  // namespace tpusim::dsl
