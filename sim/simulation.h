#pragma once

// base::Engine on the SystemC model: a fresh SystemC context with one Slice built in it.
// Each run owns its context, so many runs in one process (compare, bench, tests) neither
// share state nor leak: the slice's modules go first, then the context. `tpusim run`, whose
// process ends after its one run, leaves its Simulation instead (LeaveForExit).

#include <memory>

#include "base/engine.h"
#include "sim/slice.h"
#include "sim/systemc_context.h"

namespace tpusim::sim {

class Simulation final : public Engine {
 public:
  // Throws Error(kInvalidArgument) for a topology the model cannot build.
  Simulation(const config::Topology& topology, EngineOptions options);
  ~Simulation() override;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  Slice& slice() { return *slice_; }
  const Torus& torus() const { return slice_->torus(); }

  const DeviceGrid& grid() const override { return slice_->torus().grid(); }
  bool functional() const override { return slice_->state().run().functional(); }
  BufferHandle Allocate(ChipId chip, MemorySpace space, uint64_t bytes, const std::string& label,
                        Uninitialized fill = {}) override {
    return slice_->Allocate(chip, space, bytes, label, fill);
  }
  uint64_t BufferSize(BufferHandle buffer) const override { return slice_->BufferSize(buffer); }
  void WriteHost(BufferHandle buffer, const void* data, uint64_t size) override {
    slice_->WriteHost(buffer, data, size);
  }
  void CopyHost(BufferHandle from, BufferHandle to) override { slice_->CopyHost(from, to); }
  std::vector<uint8_t> ReadHost(BufferHandle buffer) const override {
    return slice_->ReadHost(buffer);
  }
  std::shared_ptr<std::vector<uint8_t>> TakeHost(BufferHandle buffer) override {
    return slice_->TakeHost(buffer);
  }
  SemaphoreHandle AddSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name) override {
    return slice_->AddSemaphore(chip, kind, name);
  }
  using Engine::Run;
  RunOutcome Run(const CoreProgram& program, const std::string& name) override;
  void LeaveForExit() override { context_.Leave(); }

 private:
  SystemCContext context_;  // first in, last out: every SystemC object of the run lives in it
  // SystemC's module registry removes a module by searching from its oldest entry and moving
  // its newest into the hole. Elaboration adds a kernel module after the slice's, which lives
  // until the context ends. Removing two modules made before the slice first parks that one
  // at the front and puts the slice's newest module second; the slice's modules, removed
  // newest first, are then each found second: constant time, not quadratic in the slice.
  std::unique_ptr<sc_core::sc_module> first_modules_[2];
  std::unique_ptr<Slice> slice_;
};

}  // namespace tpusim::sim
