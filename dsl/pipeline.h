#pragma once

// Grid pipelining of BlockSpec operands (docs/references.md §5), shared by pallas_call grids
// and emit_pipeline, and run_scoped allocations.
//
// A pipelined (VMEM or SMEM) operand gets two buffers and one DMA semaphore per buffer,
// allocated when the pipeline starts and freed when it ends. Step s of the grid:
//   1. starts the copy-in of each input's block for step s+1 into the other buffer, unless
//      step s+1 maps to the block already held (the copy is skipped);
//   2. waits for the copy-in of step s's blocks (started one step earlier; step 0 starts
//      its own first);
//   3. runs the body on the current buffers;
//   4. for each output whose block index changes at step s+1, or at the last step, starts
//      the copy-out of its buffer and then waits for the previous copy-out from the other
//      buffer, which the next block will write into;
//   and after the last step waits for every copy-out. The copies are real DMAs through the
// model, so they take HBM and VMEM bandwidth, contend with other traffic and show on the
// trace's DMA tracks.

#include <functional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"

namespace tpusim::dsl {

// The body of emit_pipeline: the inner grid indices of the step and the refs of the
// current blocks (inputs, then outputs).
using PipelineBody = std::function<void(const std::vector<int>& indices, const Refs& blocks)>;

// pltpu.emit_pipeline inside a kernel: runs `body` over `grid`, pipelining blocks of the
// `inputs` and `outputs` (usually HBM/ANY refs, possibly sliced) into VMEM as the specs
// say. Its buffers are allocated for the duration of the call. k.program_id still refers
// to the outer grid; the inner indices are the body's first argument.
// `dimension_semantics` ("parallel" or "arbitrary", one per grid dimension; empty: all
// arbitrary) lets RunOptions::grid_seed shuffle the inner grid as it does the outer one.
void emit_pipeline(Kernel& k, const PipelineBody& body, const std::vector<int>& grid,
                   const std::vector<BlockSpec>& in_specs, const std::vector<BlockSpec>& out_specs,
                   const Refs& inputs, const Refs& outputs,
                   const std::vector<std::string>& dimension_semantics = {});

// pl.run_scoped: allocates VMEM/SMEM buffers and semaphores (ScratchSpec::VMEM, SMEM,
// DMA, REGULAR), runs `body` with them, and frees them when it returns. Semaphores must be
// 0 and DMAs on the buffers finished by then.
void run_scoped(Kernel& k, const std::function<void(const Refs&)>& body,
                const std::vector<ScratchSpec>& shapes);

// One operand of a pipeline.
struct PipelineOperand {
  Ref ref;  // the whole operand (HBM for a pallas_call's operands)
  BlockSpec spec;
  bool output = false;
  std::string what;  // "input 1 ('b')": how errors name it
};

// The grid points one TensorCore runs: indices [begin, end) of grid axis `axis`, every
// point of the other axes; the whole grid when axis < 0.
struct GridShare {
  int axis = -1;
  int begin = 0;
  int end = 0;
};

// Mosaic's megacore split (docs/dsl.md, "Megacore"): the leading grid axis whose
// dimension_semantics is "parallel" or "core_parallel" is cut into `cores` contiguous
// ranges, the first cores taking one step more when it does not divide; `core` gets range
// number `core`. With no such axis the share is the whole grid (axis -1), which core 0
// runs alone.
GridShare CoreShare(const std::vector<int>& grid, const std::vector<std::string>& semantics,
                    int core, int cores);

class GridPipeline {
 public:
  // Checks every BlockSpec against its operand's shape: rank, the (8, 128) rule for VMEM
  // blocks and even tiling. Throws Error(`kind`) naming `owner`, the operand and the rule.
  GridPipeline(std::string owner, std::vector<int> grid, std::vector<PipelineOperand> operands,
               ErrorKind kind);

  using Step = std::function<void(const std::vector<int>& indices, const Refs& operands)>;
  // Runs every grid step on k's core in lexicographic order (or as ShuffleParallelDims
  // says), each inside a trace scope "<scope> (i, j)". `operands` holds the current block
  // refs of pipelined operands and the whole refs of ANY operands, in the order given.
  // `scalars`: this device's scalar-prefetch values, for ScalarIndexMaps.
  // `share`: only these grid points (one core's share of a megacore grid); none when
  // share.begin == share.end on an axis.
  void Run(Kernel& k, const Step& step, const std::string& scope,
           const std::vector<Array>& scalars = {}, const GridShare& share = {}) const;

  // VMEM (or SMEM) bytes of one buffer of operand i; 0 for ANY operands.
  uint64_t BlockBytes(size_t i) const;

  // Visits the indices of each 'parallel' grid dimension in an order drawn from `seed`
  // (interpret mode's random_seed), so a kernel that depends on the order shows it;
  // 'arbitrary' dimensions keep theirs. The same seed gives the same order.
  void ShuffleParallelDims(const std::vector<std::string>& semantics, uint64_t seed);

 private:
  struct Plan {
    PipelineOperand operand;
    bool pipelined = false;
    Shape block;         // squeezed dims as 1
    Shape kernel_shape;  // what the kernel sees: squeezed dims dropped
    Shape blocks;        // number of blocks along each dim
  };
  BlockIndex IndexOf(const Plan& plan, const std::vector<int>& ids,
                     const std::vector<Array>& scalars) const;

  // The grid point a lexicographic counter over `share`'s points stands for.
  std::vector<int> Visit(const std::vector<int>& counter, const GridShare& share) const;

  std::string owner_;
  std::vector<int> grid_;
  std::vector<std::vector<int>> order_;  // per dimension; empty: 0, 1, 2, ...
  std::vector<Plan> plans_;
};

// "step (0, 1)", "step (3,)".
std::string GridStepName(const std::string& prefix, const std::vector<int>& ids);
// Lexicographic order, the last grid axis fastest; false after the last point.
bool NextGridPoint(const std::vector<int>& grid, std::vector<int>& ids);

}  // namespace tpusim::dsl
