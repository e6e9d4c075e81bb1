#pragma once

// A slice of chips built from a topology: memories, DMA engines, ICI links, semaphores and
// one core per chip. Host code allocates buffers and semaphores, then Run() executes one
// program per core (SPMD) until every core finishes, a kernel fails, the cores deadlock or
// the simulated-time limit passes. Run() reports instead of throwing, so the trace is
// always complete up to the failure.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/engine.h"
#include "sim/torus.h"

namespace tpusim::sim {

using SystemOptions = EngineOptions;

class System final : public Engine {
 public:
  System(const config::Topology& topology, SystemOptions options);
  ~System();
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  const Torus& torus() const;
  const config::Topology& topology() const;
  const DeviceGrid& grid() const override;
  bool functional() const override;

  BufferHandle Allocate(ChipId chip, MemorySpace space, uint64_t bytes, const std::string& label,
                        Uninitialized fill = {}) override;
  uint64_t BufferSize(BufferHandle buffer) const override;
  void WriteHost(BufferHandle buffer, const void* data, uint64_t size) override;
  std::vector<uint8_t> ReadHost(BufferHandle buffer) const override;

  SemaphoreHandle AddSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name) override;

  RunOutcome Run(const CoreProgram& program) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpusim::sim
