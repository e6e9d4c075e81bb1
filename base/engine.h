#pragma once

// The host side of the interface between the DSL and a model: an Engine is a slice of
// chips built from a topology, ready to run one program per core. Host code allocates
// buffers and semaphores, then Run() executes the program on every core (SPMD) until
// every core finishes, a kernel fails, the cores deadlock or the simulated-time limit
// passes. Run() reports instead of throwing, so the trace is complete up to the failure.
//
// The DSL sees only this and base::CorePort; sim/ implements both with the SystemC model.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/core_port.h"
#include "base/errors.h"
#include "base/run_config.h"
#include "base/time.h"
#include "topologies/topology.pb.h"
#include "traces/trace_sink.h"

namespace tpusim::base {

// The model reads the timing and checking options of a run's one RunConfig; the name
// says which side of the interface is speaking.
using EngineOptions = RunConfig;

struct PortStats {
  std::string name;  // "chip 3 ICI x+", "chip 0 HBM"
  ChipId chip = 0;
  Picoseconds busy = 0;
  uint64_t bytes = 0;    // the DMAs' bytes (and a core's own HBM traffic on a memory)
  uint64_t signals = 0;  // semaphore signals and zero-byte DMA notices that crossed a link
};

struct CoreStats {
  Picoseconds finish = 0;
  Picoseconds blocked = 0;  // waiting on DMA or semaphore waits
  Picoseconds mxu_busy = 0;
  Picoseconds vpu_busy = 0;
  // Dots of f32 operands at DEFAULT precision: one bf16 pass, as on the chip, so their
  // operands were rounded to bf16 (a result that misses an f32 reference says so).
  uint64_t f32_dots_at_one_pass = 0;
};

struct RunStats {
  Picoseconds end_time = 0;  // when the last core finished its kernel
  uint64_t dmas = 0;
  uint64_t dma_bytes = 0;
  uint64_t events = 0;  // callbacks the model ran
  std::vector<CoreStats> cores;
  std::vector<PortStats> links;
  std::vector<PortStats> memories;
  // Multi-slice runs: each host's DCN NIC, its port out then its port in (sim/dcn.h).
  std::vector<PortStats> nics;
  // Functional runs: buffers read before anything wrote them, so they read as NaN (or an
  // integer's largest value): "'acc f32[8,128]' in VMEM of chip 0 (x=0)".
  std::vector<std::string> unwritten_reads;
};

struct RunOutcome {
  bool ok = true;
  std::optional<ErrorKind> error_kind;
  std::string error;
  RunStats stats;
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual const DeviceGrid& grid() const = 0;
  virtual bool functional() const = 0;

  // Throws Error(kCapacity) with the memory's allocation breakdown when it does not fit.
  virtual BufferHandle Allocate(ChipId chip, MemorySpace space, uint64_t bytes,
                                const std::string& label, Uninitialized fill = {}) = 0;
  virtual uint64_t BufferSize(BufferHandle buffer) const = 0;
  virtual void WriteHost(BufferHandle buffer, const void* data, uint64_t size) = 0;
  // WriteHost of `from`'s bytes into `to`, a buffer of the same size: the two share the
  // bytes until either is written, so replicated inputs cost their size once.
  virtual void CopyHost(BufferHandle from, BufferHandle to) = 0;
  virtual std::vector<uint8_t> ReadHost(BufferHandle buffer) const = 0;
  // ReadHost for results read once after the run: the buffer's bytes move out, and the
  // buffer reads as never written from then on. Buffers that hold the same bytes because
  // DMAs shared them (the outputs of an all-gather, say) hand back the same vector, so a
  // functional run at pod scale holds each distinct output once: copy it before writing.
  virtual std::shared_ptr<std::vector<uint8_t>> TakeHost(BufferHandle buffer) = 0;

  virtual SemaphoreHandle AddSemaphore(ChipId chip, SemaphoreKind kind,
                                       const std::string& name) = 0;

  using CoreProgram = std::function<void(CorePort&)>;
  // May be called once per Engine. Every core runs `program`; `name` (the kernel's or the
  // program's) names each core's top-level slice on the trace and its errors.
  virtual RunOutcome Run(const CoreProgram& program, const std::string& name) = 0;
  RunOutcome Run(const CoreProgram& program) { return Run(program, "kernel"); }

  // For a caller that keeps this engine until its process ends and never destroys it
  // (RunConfig::leave_model_at_exit): gives back what the engine holds of the host thread, so
  // that another engine can be built and run on it, without taking the model apart.
  virtual void LeaveForExit() {}
};

// The SystemC model of `topology` (sim/). Throws Error(kInvalidArgument) for a topology
// the model cannot build.
std::unique_ptr<Engine> BuildEngine(const config::Topology& topology, EngineOptions options);

}  // namespace tpusim::base
