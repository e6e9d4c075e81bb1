#pragma once

// pallas_call: a kernel, its grid, how each operand is blocked, and its scratch.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "dsl/array.h"
#include "dsl/kernel.h"
#include "dsl/ref.h"

namespace tpusim::dsl {

// Grid indices -> block indices (scaled by block_shape), as in Pallas.
using BlockIndex = std::vector<int64_t>;
using IndexMap = std::function<BlockIndex(const std::vector<int>&)>;
// With PrefetchScalarGridSpec, an index map may also read the scalar-prefetch operands, as
// Pallas passes their refs after the grid indices: it gets this device's values of each.
using ScalarIndexMap =
    std::function<BlockIndex(const std::vector<int>& grid_indices, const std::vector<Array>&)>;

// A block dimension of size 1 that the kernel's ref drops, like None (pl.Squeezed()) in a
// Pallas block shape: BlockSpec({kSqueezed, 8, 128}, ...) gives the kernel an (8, 128) ref.
// Its index-map entry is an element index (the block size is 1).
inline constexpr int64_t kSqueezed = -1;

// Thrown by an index map written for a different number of grid axes.
[[noreturn]] void ThrowIndexMapArity(size_t takes, size_t grid_axes);

// An index map written with one int per grid axis (up to 4), returning a BlockIndex.
template <typename F>
concept IntIndexMap =
    !std::is_convertible_v<F, IndexMap> &&
    (std::is_invocable_v<F, int> || std::is_invocable_v<F, int, int> ||
     std::is_invocable_v<F, int, int, int> || std::is_invocable_v<F, int, int, int, int>);

// How a pallas_call (or emit_pipeline) operand is split into blocks, one per grid step.
// VMEM (the default) and SMEM operands are pipelined: each step's blocks are copied in
// (HBM -> VMEM, double-buffered, the next step's prefetched while this one computes) and
// output blocks are written back when their block index changes or the grid ends; the
// kernel sees the current blocks. ANY leaves the whole operand in HBM for the kernel's
// own DMAs. Blocks obey the TPU tiling rule: the last two dims are multiples of (8, 128)
// or equal the array's, and every dim divides the array's evenly.
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
  // An index map taking the grid indices as ints, one per grid axis:
  //   BlockSpec({bm, bk}, [](int i, int j, int k) { return BlockIndex{i, k}; })
  template <IntIndexMap F>
  BlockSpec(Shape block, F map, MemorySpace space = MemorySpace::kVmem)
      : block_shape(std::move(block)), index_map(FromInts(std::move(map))), memory_space(space) {}
  // An index map reading the scalar-prefetch operands (PrefetchScalarGridSpec):
  //   BlockSpec({8, 128}, [](const std::vector<int>& g, const std::vector<Array>& s) {
  //     return BlockIndex{static_cast<int64_t>(s[0].GetFlat(g[0])), 0}; })
  BlockSpec(Shape block, ScalarIndexMap map, MemorySpace space = MemorySpace::kVmem)
      : block_shape(std::move(block)), scalar_index_map(std::move(map)), memory_space(space) {}

  std::optional<Shape> block_shape;  // unset: the whole operand; kSqueezed drops a dim
  IndexMap index_map;                // unset: block (0, 0, ...)
  ScalarIndexMap scalar_index_map;   // set instead of index_map to read scalar prefetch
  MemorySpace memory_space = MemorySpace::kVmem;

 private:
  template <typename F>
  static IndexMap FromInts(F f) {
    return [f = std::move(f)](const std::vector<int>& g) -> BlockIndex {
      auto need = [&](size_t n) {
        if (g.size() != n) ThrowIndexMapArity(n, g.size());
      };
      if constexpr (std::is_invocable_v<F, int>) {
        need(1);
        return BlockIndex(f(g[0]));
      } else if constexpr (std::is_invocable_v<F, int, int>) {
        need(2);
        return BlockIndex(f(g[0], g[1]));
      } else if constexpr (std::is_invocable_v<F, int, int, int>) {
        need(3);
        return BlockIndex(f(g[0], g[1], g[2]));
      } else {
        need(4);
        return BlockIndex(f(g[0], g[1], g[2], g[3]));
      }
    };
  }
};

// A scratch operand: VMEM/SMEM/HBM buffers or semaphores, alone or as arrays. Persists across
// grid steps.
struct ScratchSpec {
  static ScratchSpec VMEM(Shape shape, DType dtype, std::string name = "") {
    return ScratchSpec{MemorySpace::kVmem, std::move(shape), dtype, SemaphoreType::kDma,
                       std::move(name)};
  }
  // pltpu.HBM(shape, dtype): a buffer in HBM that the kernel reaches with DMAs only, for
  // data too large for VMEM (an accumulator, a landing zone for remote copies).
  static ScratchSpec HBM(Shape shape, DType dtype, std::string name = "") {
    return ScratchSpec{MemorySpace::kAny, std::move(shape), dtype, SemaphoreType::kDma,
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
  // PrefetchScalarGridSpec: the first num_scalar_prefetch inputs are copied whole into
  // SMEM before the grid starts. The kernel gets their refs first (then the inputs,
  // outputs and scratch, as in Pallas), in_specs describe only the inputs after them, and
  // index maps may read them (ScalarIndexMap). Index maps see the values passed in, so a
  // timing-only run picks the same blocks as a functional one: scalar operands need data.
  int num_scalar_prefetch = 0;
};

// pltpu.PrefetchScalarGridSpec(num_scalar_prefetch, grid, in_specs, out_specs,
// scratch_shapes).
inline GridSpec PrefetchScalarGridSpec(int num_scalar_prefetch, GridSpec spec) {
  spec.num_scalar_prefetch = num_scalar_prefetch;
  return spec;
}

// pltpu.CompilerParams: what Mosaic needs beyond the grid.
struct CompilerParams {
  // "parallel" or "arbitrary" per grid axis (empty: all "arbitrary"). One core runs every
  // step either way; RunOptions::grid_seed shuffles the order of the "parallel" ones.
  std::vector<std::string> dimension_semantics;
  // Which barrier semaphore k.barrier_semaphore() returns: calls with the same id share
  // one per chip, calls with different ids get separate ones. A kernel that uses the
  // barrier semaphore must set it, as Pallas requires.
  std::optional<int> collective_id;
};

// {input index: output index}, as pallas_call's input_output_aliases: the output is the
// input's HBM buffer (no new allocation). Input indices count every operand, scalar
// prefetch ones included.
using InputOutputAliases = std::map<int, int>;

struct PallasCall {
  std::string name;
  KernelFn kernel;
  GridSpec grid_spec;
  std::vector<ShapeDtype> out_shape;  // per device
  CompilerParams compiler_params;
  InputOutputAliases input_output_aliases;
  // Names for the kernel's operands in errors and traces; defaults to "in0", "out0".
  std::vector<std::string> in_names;
  std::vector<std::string> out_names;
  // The call models one of XLA's collectives (kernels/lax), not a Pallas kernel: its remote
  // DMAs stand for XLA's, which reach every chip, so v5e's power-of-two offset rule for a
  // Pallas kernel's remote DMAs does not bind them (docs/model.md).
  bool xla_collective = false;
};

PallasCall pallas_call(std::string name, KernelFn kernel, GridSpec grid_spec,
                       std::vector<ShapeDtype> out_shape, CompilerParams compiler_params = {},
                       InputOutputAliases input_output_aliases = {});

}  // namespace tpusim::dsl
