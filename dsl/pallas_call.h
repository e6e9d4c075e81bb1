#pragma once

// pallas_call: a kernel, its grid, how each operand is blocked, and its scratch.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "dsl/kernel.h"
#include "dsl/ref.h"

namespace tpusim::dsl {

// Grid indices -> block indices (scaled by block_shape), as in Pallas.
using IndexMap = std::function<std::vector<int64_t>(const std::vector<int>&)>;

struct BlockSpec {
  // Whole operand, left in HBM: the kernel moves it with DMAs (memory_space=ANY).
  static BlockSpec Any() {
    BlockSpec spec;
    spec.memory_space = MemorySpace::kAny;
    return spec;
  }
  BlockSpec() = default;
  BlockSpec(Shape block, IndexMap map, MemorySpace space = MemorySpace::kVmem)
      : block_shape(std::move(block)), index_map(std::move(map)), memory_space(space) {}

  std::optional<Shape> block_shape;  // unset: the whole operand
  IndexMap index_map;                // unset: block (0, 0, ...)
  MemorySpace memory_space = MemorySpace::kVmem;
};

struct ShapeDtype {
  Shape shape;
  DType dtype;
};

// A scratch operand: VMEM/SMEM buffers or semaphores, alone or as arrays. Persists across
// grid steps.
struct ScratchSpec {
  static ScratchSpec VMEM(Shape shape, DType dtype, std::string name = "") {
    return ScratchSpec{MemorySpace::kVmem, std::move(shape), dtype, SemaphoreType::kDma,
                       std::move(name)};
  }
  static ScratchSpec SMEM(Shape shape, DType dtype, std::string name = "") {
    return ScratchSpec{MemorySpace::kSmem, std::move(shape), dtype, SemaphoreType::kDma,
                       std::move(name)};
  }
  // SemaphoreType.DMA / SemaphoreType.REGULAR; an empty shape is a single semaphore.
  static ScratchSpec DMA(Shape shape = {}, std::string name = "") {
    return ScratchSpec{MemorySpace::kSemaphore, std::move(shape), DType::kInt32,
                       SemaphoreType::kDma, std::move(name)};
  }
  static ScratchSpec REGULAR(Shape shape = {}, std::string name = "") {
    return ScratchSpec{MemorySpace::kSemaphore, std::move(shape), DType::kInt32,
                       SemaphoreType::kRegular, std::move(name)};
  }

  MemorySpace memory_space;
  Shape shape;
  DType dtype;
  SemaphoreType semaphore_type;
  std::string name;
};

struct GridSpec {
  std::vector<int> grid = {1};
  std::vector<BlockSpec> in_specs;   // empty: every input is ANY
  std::vector<BlockSpec> out_specs;  // empty: every output is ANY
  std::vector<ScratchSpec> scratch_shapes;
  // "parallel" or "arbitrary" per grid axis; recorded, and checked for spelling.
  std::vector<std::string> dimension_semantics;
};

struct PallasCall {
  std::string name;
  KernelFn kernel;
  GridSpec grid_spec;
  std::vector<ShapeDtype> out_shape;  // per device
  // Names for the kernel's operands in errors and traces; defaults to "in0", "out0".
  std::vector<std::string> in_names;
  std::vector<std::string> out_names;
};

PallasCall pallas_call(std::string name, KernelFn kernel, GridSpec grid_spec,
                       std::vector<ShapeDtype> out_shape);

}  // namespace tpusim::dsl
