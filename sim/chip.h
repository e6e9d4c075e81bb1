#pragma once

// One chip of the slice (`slice.chip_1_3`): its TensorCores (chip.tensor_cores, each with its
// own VMEM and SMEM), the HBM, DMA engine and router they share, and the ICI links that leave
// it (one module per direction), plus the semaphores kernels make on it. The chip wires the router
// to its memories (or to the timing model a topology puts in front of one) and to its outgoing
// links when the tree is elaborated, so a test or a user can bind another target first
// (UseMemoryTarget).

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "sim/base_names.h"
#include "sim/chunk.h"
#include "sim/parameters.h"
#include "sim/semaphore.h"
#include "sim/semaphore_table.h"
#include "sim/torus.h"
#include "topologies/topology.pb.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class DmaEngine;
class DmaLedger;
class IciLink;
class LinkTiming;
class Memory;
class Router;
class SliceState;
class TensorCore;
struct Link;

// The trace tracks of one chip, in the fixed order README.md's "Comparing schedules" lists
// them, so traces of different runs line up side by side.
// A chip of several TensorCores numbers each core's tracks ("core 1", "MXU 1", "VMEM 1 port").
struct CoreTracks {
  traces::TrackId core = 0;
  traces::TrackId mxu = 0;
  traces::TrackId vpu = 0;
  traces::TrackId vmem = 0;
  traces::TrackId smem = 0;
};
struct ChipTracks {
  traces::TrackId chip = 0;
  std::vector<CoreTracks> cores;  // by core index
  std::vector<traces::TrackId> dma_channels;
  traces::TrackId dma_arrivals = 0;
  traces::TrackId hbm = 0;
  std::vector<traces::TrackId> links;  // by position in Torus::LinksFrom
  traces::TrackId bytes_in_flight = 0;
};

// One link direction leaving the chip, as the topology sets it.
struct LinkSetup {
  LinkId id = 0;
  double bytes_per_second = 0;
  Picoseconds latency = 0;
  // A DCN link (Torus::IsDcn): the NIC ports it books, its host's out and the other's in.
  LinkTiming* nic_out = nullptr;
  LinkTiming* nic_in = nullptr;
  // The die-to-die link between two chiplets of one chip (config::ChipletConfig): named
  // "d2d_chiplet+" in the module tree and "D2D" in stats and traces, where ICI links are "ici_".
  bool d2d = false;
};

class Chip : public sc_core::sc_module, public Described {
 public:
  // `config` is the chip's own (after the topology's chip_override); `links` its outgoing
  // links in Torus::LinksFrom order.
  Chip(sc_core::sc_module_name name, SliceState& slice, DmaLedger& ledger, ChipId id,
       config::ChipConfig config, const std::vector<LinkSetup>& links);
  ~Chip() override;

  ChipId id() const { return id_; }
  const config::ChipConfig& config() const { return config_; }
  const ChipTracks& tracks() const { return tracks_; }
  uint32_t core_count() const { return static_cast<uint32_t>(cores_.size()); }
  TensorCore& core(uint32_t index = 0) { return *cores_[index]; }
  // HBM, or core `core`'s VMEM or SMEM.
  Memory& memory(MemorySpace space, uint32_t core = 0) {
    return *memories_[static_cast<size_t>(MemorySlot(space, core))];
  }
  const Memory& memory(MemorySpace space, uint32_t core = 0) const {
    return *memories_[static_cast<size_t>(MemorySlot(space, core))];
  }
  // By MemorySlot, as addresses name them: [0, memory_count()).
  Memory& memory_at(int slot) { return *memories_[static_cast<size_t>(slot)]; }
  int memory_count() const { return static_cast<int>(memories_.size()); }
  // "chip (0,1)" on a single-core chip, "chip (0,1) core 1" on a chip of several.
  std::string DescribeCore(uint32_t core) const;
  // The same, given the chip's own description (Torus::Describe).
  std::string DescribeCore(std::string chip, uint32_t core) const;
  DmaEngine& dma() { return *dma_; }
  Router& router() { return *router_; }
  const std::vector<std::unique_ptr<IciLink>>& links() const { return links_; }

  // Sends `space`'s DMA chunks to `target` instead of the memory's own port, as a timing
  // model from the topology does. Call before the simulation starts; `target` reaches the
  // bytes through the memory's socket. `model` names it for reports and describe.
  void UseMemoryTarget(MemorySpace space, tlm::tlm_base_target_socket_b<>& target,
                       const std::string& model, uint32_t core = 0);

  // Sends what leaves by outgoing link `id` (DMA chunks and semaphore signals) to `target`,
  // a link model of the user's, instead of the link's own timing. The initiator calls it once
  // per chunk or signal with ChunkExtension::forward false, then goes on to the router the
  // link reaches, so the target books the hop and answers; it need not forward. Call before
  // the simulation starts.
  void UseLinkTarget(LinkId id, tlm::tlm_base_target_socket_b<>& target);

  // The chip's semaphores and the threads a change wakes (the slice finds them by chip).
  SemaphoreHandle AddSemaphore(SemaphoreKind kind, const std::string& name);
  ChipSemaphores& semaphores() { return semaphores_; }

  std::vector<Parameter> parameters() const override;

 protected:
  void before_end_of_elaboration() override;

 private:
  // A link to another slice, booked on the hosts' NICs (sim/dcn.h).
  void AddDcnLink(LinkId id, LinkTiming& out, LinkTiming& in);
  static ChipTracks MakeTracks(SliceState& slice, ChipId id, const config::ChipConfig& config,
                               const std::vector<LinkSetup>& links);

  SliceState& slice_;
  ChipId id_;
  config::ChipConfig config_;
  ChipTracks tracks_;
  ChipSemaphores& semaphores_;                     // laid out by the slice with every chip's
  std::vector<std::unique_ptr<Memory>> memories_;  // by MemorySlot
  std::vector<std::unique_ptr<TensorCore>> cores_;
  std::unique_ptr<DmaEngine> dma_;
  std::unique_ptr<Router> router_;
  std::vector<std::unique_ptr<IciLink>> links_;
  std::vector<std::unique_ptr<sc_core::sc_module>> memory_models_;
  std::vector<tlm::tlm_base_target_socket_b<>*> memory_targets_;  // by MemorySlot
  std::vector<tlm::tlm_base_target_socket_b<>*> link_targets_;    // by position in links_
};

}  // namespace tpusim::sim
