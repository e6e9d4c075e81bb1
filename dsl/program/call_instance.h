#pragma once

// One pallas_call of a program, shared by every device: its slots (operands, scratch, the
// barrier semaphore) and its grid pipeline. Each device enters it on its own core (binds
// its operands to HBM buffers, allocates its scratch and semaphores), runs the grid and
// leaves it (frees the scratch). A remote copy into a device that is not inside the call
// finds no binding there: the "missing start barrier" error of kernel.cc.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dsl/call_layout.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"

namespace tpusim::dsl {

class GridPipeline;
class Kernel;

// The call's own consistency: grid, scalar prefetch, compiler_params, how many BlockSpecs
// it gives for `inputs` operands, input_output_aliases indices. Throws
// Error(kInvalidArgument) naming the call.
void CheckPallasCall(const PallasCall& call, size_t inputs);
// Each pair of input_output_aliases has one shape and dtype; throws
// Error(kInvalidArgument) naming both operands.
void CheckAliasTypes(const PallasCall& call, const std::vector<ShapeDtype>& inputs);
// "input 1 ('b')", "output 0": how errors name a call's operand.
std::string OperandLabel(const PallasCall& call, bool input, size_t index);

class CallInstance {
 public:
  // A call checked outside any run (ShardMap::Check) follows the default options.
  static const base::RunConfig kDefaultConfig;

  // Also checks every BlockSpec against its operand (Error(kInvalidArgument)).
  // `barrier_semaphores`: by device and core (ProgramRun::BarrierSemaphores), the barrier
  // semaphore of the call's collective_id (empty when it sets none).
  CallInstance(const Mesh& mesh, PallasCall call, const std::vector<ShapeDtype>& inputs,
               std::vector<uint32_t> barrier_semaphores = {},
               const base::RunConfig& config = kDefaultConfig);
  ~CallInstance();

  const PallasCall& call() const { return call_; }
  // On `port`'s core: `operands` are the HBM buffers of the inputs, then the outputs.
  // `scalar_values`: this device's values of the scalar-prefetch operands where the host
  // knows them; index maps read them in timing-only runs (functional runs read SMEM).
  void Run(base::CorePort& port, const std::vector<base::BufferHandle>& operands,
           const std::vector<std::optional<Array>>& scalar_values);

 private:
  // One TensorCore's part of Run: binds its scratch, runs `share` of the grid, frees it.
  void RunOnCore(base::CorePort& port, const std::vector<base::BufferHandle>& operands,
                 const std::vector<std::optional<Array>>& scalar_values, const GridShare& share);
  // Copies the scalar-prefetch operands into SMEM and returns the values index maps see.
  std::vector<Array> PrefetchScalars(Kernel& kernel,
                                     const std::vector<std::optional<Array>>& host_values);

  PallasCall call_;
  CallLayout layout_;
  std::unique_ptr<GridPipeline> pipeline_;
  size_t scalar_count_ = 0;
  size_t operand_count_ = 0;
  size_t scratch_end_ = 0;
  size_t scalar_smem_begin_ = 0;  // SMEM copies of the scalars, then their DMA semaphore
};

}  // namespace tpusim::dsl
