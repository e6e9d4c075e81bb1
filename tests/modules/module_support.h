#pragma once

// Helpers for the module tests (tests/modules): they build sim/ modules or a whole Slice in
// a SystemC context of their own and drive them with TLM-2.0 calls or CorePort programs,
// without the DSL.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "base/engine.h"
#include "sim/chunk.h"
#include "sim/simulation.h"
#include "sim/systemc_context.h"
#include "topologies/topology.pb.h"

namespace tpusim::modules {

using base::Picoseconds;
using sim::ChipId;

// Each test owns a fresh SystemC context; modules a test makes (its locals) go before it.
class ModuleTest : public ::testing::Test {
 protected:
  sim::SystemCContext context_;
};

// Elaborates the modules made so far (binds ports and sockets, runs end_of_elaboration)
// without letting time pass.
void Elaborate();

// A TLM-2.0 initiator for driving a target module from a test: bind `socket` to the target's
// socket, Elaborate(), then call through `target()`.
class TestInitiator : public sc_core::sc_module, public tlm::tlm_bw_transport_if<> {
 public:
  explicit TestInitiator(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
    socket.bind(*this);
  }

  tlm::tlm_initiator_socket<> socket;
  tlm::tlm_fw_transport_if<>& target() { return *socket[0]; }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&,
                                     sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
};

// A DMA chunk as a DMA engine sends one: a TLM_IGNORE_COMMAND transaction of `bytes` to
// `address`, with a ChunkExtension whose schedule starts at `now`.
class ChunkPayload {
 public:
  ChunkPayload(uint64_t address, uint64_t bytes, Picoseconds now = 0, uint64_t transfer = 1);
  ChunkPayload(const ChunkPayload&) = delete;
  ChunkPayload& operator=(const ChunkPayload&) = delete;

  tlm::tlm_generic_payload& payload() { return payload_; }
  sim::ChunkExtension& chunk() { return *chunk_; }
  sim::ChunkSchedule& schedule() { return chunk_->schedule; }
  // Starts the schedule again at `now`, for the next chunk.
  void Restart(Picoseconds now);

 private:
  std::string label_ = "test chunk";
  tlm::tlm_generic_payload payload_;
  sim::ChunkExtension* chunk_;  // owned by payload_
};

// Global address of byte `offset` of chip `chip`'s buffer in `space`, as Memory places
// buffers (the first buffer of a memory starts at offset 0).
inline uint64_t Hbm(ChipId chip, uint64_t offset = 0) {
  return sim::MakeAddress(chip, base::MemorySpace::kHbm, offset);
}

// One DMA for DmaRun: `bytes` from a fresh buffer in `from_space` of chip `from` to a fresh
// buffer in `to_space` of chip `to`.
struct DmaSpec {
  ChipId from = 0;
  base::MemorySpace from_space = base::MemorySpace::kHbm;
  ChipId to = 0;
  base::MemorySpace to_space = base::MemorySpace::kHbm;
  uint64_t bytes = 0;
  // Started after the DMA before it in this list (same issuer) has landed; otherwise at 0.
  bool after_previous = false;
  // Reads the source buffer of this earlier DMA instead of a fresh one (-1: fresh).
  int reuse_source = -1;
};

// A Simulation whose cores run DMAs without the DSL: each issuer starts its DMAs at time 0
// (or once the previous one landed), and an activity on each receiving chip waits for each
// DMA and records when it landed. Tests may bind modules of their own before Run (Keep).
class DmaRun {
 public:
  DmaRun(const config::Topology& topology, std::vector<DmaSpec> dmas,
         base::EngineOptions options = {});
  ~DmaRun();

  sim::Simulation& simulation() { return *simulation_; }
  sim::Slice& slice() { return simulation_->slice(); }
  // Keeps `module` alive until just before the simulation goes.
  template <typename Module>
  Module& Keep(std::unique_ptr<Module> module) {
    Module& kept = *module;
    kept_.push_back(std::move(module));
    return kept;
  }
  // Writes `bytes` into DMA `index`'s source buffer before the run (functional runs).
  void FillSource(size_t index, const std::vector<uint8_t>& bytes);
  std::vector<uint8_t> ReadDestination(size_t index);
  base::BufferHandle source(size_t index) const { return buffers_[index].first; }

  // Runs (once); fails the test if the run does not complete and `expect_ok`. Returns when
  // each DMA landed.
  std::vector<Picoseconds> Run(bool expect_ok = true);
  const base::RunOutcome& outcome() const { return outcome_; }

 private:
  std::unique_ptr<sim::Simulation> simulation_;
  std::vector<std::unique_ptr<sc_core::sc_module>> kept_;
  std::vector<DmaSpec> dmas_;
  std::vector<std::pair<base::BufferHandle, base::BufferHandle>> buffers_;
  std::vector<base::SemaphoreHandle> received_;
  base::RunOutcome outcome_;
};

// When each DMA landed, in a run of its own.
std::vector<Picoseconds> TimeDmas(const config::Topology& topology,
                                  const std::vector<DmaSpec>& dmas,
                                  base::EngineOptions options = {});
Picoseconds TimeDma(const config::Topology& topology, const DmaSpec& dma,
                    base::EngineOptions options = {});

// Timing-only options (no payload), for runs that only need times.
base::EngineOptions TimingOnly();

}  // namespace tpusim::modules
