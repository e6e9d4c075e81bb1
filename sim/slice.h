#pragma once

// The top of the module tree (`slice`): the chips of a topology, each with its TensorCore,
// memories, DMA engine, router and outgoing ICI links, wired into a torus. Host code
// allocates buffers and semaphores, then Run() executes one program per core (SPMD) until
// every core finishes, a kernel fails, the cores deadlock or the simulated-time limit passes.
// Run() reports instead of throwing, so the trace is complete up to the failure.
//
// A Slice must be built inside its own SystemC context; sim::Simulation (base::BuildEngine)
// does that. Tests may build one directly inside a SystemCContext.

#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "base/engine.h"
#include "sim/base_names.h"
#include "sim/block_bytes.h"
#include "sim/dma_engine.h"
#include "sim/parameters.h"
#include "sim/slice_state.h"

namespace tpusim::sim {

class Chip;
class Dcn;

class Slice : public sc_core::sc_module, public Described {
 public:
  // Throws Error(kInvalidArgument) for a memory timing model that is unknown or misused.
  Slice(sc_core::sc_module_name name, const config::Topology& topology, EngineOptions options);
  ~Slice() override;

  const Torus& torus() const { return state_.torus(); }
  const config::Topology& topology() const { return state_.topology(); }
  SliceState& state() { return state_; }
  Chip& chip(ChipId id) { return *chips_[id]; }
  uint32_t chips() const { return static_cast<uint32_t>(chips_.size()); }

  // The host side of base::Engine.
  BufferHandle Allocate(ChipId chip, MemorySpace space, uint64_t bytes, const std::string& label,
                        Uninitialized fill);
  uint64_t BufferSize(BufferHandle buffer);
  void WriteHost(BufferHandle buffer, const void* data, uint64_t size);
  void CopyHost(BufferHandle from, BufferHandle to);
  std::vector<uint8_t> ReadHost(BufferHandle buffer);
  std::shared_ptr<std::vector<uint8_t>> TakeHost(BufferHandle buffer);
  SemaphoreHandle AddSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name);
  // May be called once per Slice; `name` names each core's top-level slice.
  RunOutcome Run(const Engine::CoreProgram& program, const std::string& name = "kernel");

  std::vector<Parameter> parameters() const override;

 private:
  // After a failed run: closes every open slice on every track and marks what never arrived.
  void CloseTraces();
  RunStats CollectStats();

  SliceState state_;
  DmaLedger ledger_;
  // Outputs handed to the host, by their blocks: a buffer made of the same blocks as one
  // handed before gets the same bytes. Holding the blocks keeps their addresses unique.
  struct HandedOff {
    BlockBytes blocks;
    std::shared_ptr<std::vector<uint8_t>> bytes;
  };
  std::map<std::vector<const uint8_t*>, HandedOff> handed_off_;
  std::unique_ptr<Dcn> dcn_;  // multi-slice topologies only
  std::vector<std::unique_ptr<Chip>> chips_;
  bool ran_ = false;
};

// "slice  topology=v5e-2x2 ...\n  chip_0_0  id=0 ...\n    core  clock=1.5 GHz ...": the
// modules under `root` (or `root` alone), one a line, indented two spaces a level from
// `depth`, with the parameters of each that has them.
std::string DescribeTree(const sc_core::sc_object& root, int depth = 0, bool recurse = true);

}  // namespace tpusim::sim
