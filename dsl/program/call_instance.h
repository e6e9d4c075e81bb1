#pragma once

// One pallas_call of a program, shared by every device: its slots (operands, scratch, the
// barrier semaphore) and its grid pipeline. Each device enters it on its own core (binds
// its operands to HBM buffers, allocates its scratch and semaphores), runs the grid and
// leaves it (frees the scratch). A remote copy into a device that is not inside the call
// finds no binding there: the "missing start barrier" error of kernel.cc.

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "dsl/call_layout.h"
#include "dsl/pallas_call.h"

namespace tpusim::dsl {

class GridPipeline;

// The call's own consistency: grid, dimension_semantics, how many BlockSpecs it gives for
// `inputs` operands. Throws Error(kInvalidArgument) naming the call.
void CheckPallasCall(const PallasCall& call, size_t inputs);

class CallInstance {
 public:
  // Also checks every BlockSpec against its operand (Error(kInvalidArgument)).
  CallInstance(const Mesh& mesh, PallasCall call, const std::vector<ShapeDtype>& inputs,
               bool zero_uninitialized = false, std::optional<uint64_t> grid_seed = {});
  ~CallInstance();

  const PallasCall& call() const { return call_; }
  // On `port`'s core: `operands` are the HBM buffers of the inputs, then the outputs.
  // `barrier_semaphores` are every device's, by device.
  void Run(sim::CorePort& port, const std::vector<sim::BufferHandle>& operands,
           const std::vector<uint32_t>& barrier_semaphores);

 private:
  PallasCall call_;
  CallLayout layout_;
  std::unique_ptr<GridPipeline> pipeline_;
  size_t operand_count_ = 0;
};

}  // namespace tpusim::dsl
