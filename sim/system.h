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

#include "sim/core_port.h"
#include "sim/errors.h"
#include "sim/time.h"
#include "sim/torus.h"
#include "topologies/topology.pb.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

struct SystemOptions {
  // Functional mode moves real bytes; timing-only mode moves none, with identical timing.
  bool functional = true;
  Picoseconds time_limit = 60'000'000'000'000ull;  // 60 s of simulated time
  traces::TraceSink* trace = nullptr;              // not owned; nullptr records nothing
  // Per-chip multiplier on compute time (1 = nominal), to model a slow chip.
  std::vector<double> chip_slowdown;
  // Happens-before race detection (sim/race_detector.h) in functional runs. Off, only two
  // DMAs writing the same bytes at the same time are still caught.
  bool race_check = true;
};

struct PortStats {
  std::string name;  // "chip 3 ICI x+", "chip 0 HBM"
  ChipId chip = 0;
  Picoseconds busy = 0;
  uint64_t bytes = 0;
};

struct CoreStats {
  Picoseconds finish = 0;
  Picoseconds blocked = 0;  // waiting on DMA or semaphore waits
  Picoseconds mxu_busy = 0;
  Picoseconds vpu_busy = 0;
};

struct RunStats {
  Picoseconds end_time = 0;  // when the last core finished its kernel
  uint64_t dmas = 0;
  uint64_t dma_bytes = 0;
  uint64_t events = 0;  // callbacks the model ran
  std::vector<CoreStats> cores;
  std::vector<PortStats> links;
  std::vector<PortStats> memories;
};

struct RunOutcome {
  bool ok = true;
  std::optional<ErrorKind> error_kind;
  std::string error;
  RunStats stats;
};

class System {
 public:
  System(const config::Topology& topology, SystemOptions options);
  ~System();
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  const Torus& torus() const;
  const config::Topology& topology() const;
  bool functional() const;

  // Throws Error(kCapacity) with the memory's allocation breakdown when it does not fit.
  BufferHandle Allocate(ChipId chip, MemorySpace space, uint64_t bytes, const std::string& label,
                        Uninitialized fill = {});
  uint64_t BufferSize(BufferHandle buffer) const;
  void WriteHost(BufferHandle buffer, const void* data, uint64_t size);
  std::vector<uint8_t> ReadHost(BufferHandle buffer) const;

  SemaphoreHandle AddSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name);

  using CoreProgram = std::function<void(CorePort&)>;
  // May be called once per System.
  RunOutcome Run(const CoreProgram& program);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpusim::sim
