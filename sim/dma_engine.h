#pragma once

// A chip's DMA engine (`slice.chip_1_3.dma`), the TLM-2.0 initiator of the model: its socket
// is bound to the chip's router, through which every chunk's transactions, DMI requests and
// debug transport go. The work itself (queueing, chunking, booking, landing) is done by its
// DmaDispatcher, kept in the slice's hot arena (sim/dma_dispatcher.h).

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "sim/base_names.h"
#include "sim/dma_dispatcher.h"
#include "sim/loosely_timed.h"
#include "sim/parameters.h"

namespace tpusim::sim {

class DmaEngine : public sc_core::sc_module, public LooselyTimedInitiator, public Described {
 public:
  DmaEngine(sc_core::sc_module_name name, SliceState& slice, DmaLedger& ledger, Chip& chip,
            uint32_t channels, uint64_t chunk_bytes, Picoseconds issue_latency);

  tlm::tlm_initiator_socket<> socket;  // to the chip's router

  // Checks the request, then queues it behind busy channels. Never blocks. `core`: the
  // TensorCore of the chip that issues it (the chip's cores share the engine).
  void Start(const DmaRequest& request, uint32_t core = 0) { dispatcher_.Start(request, core); }
  DmaLedger& ledger() { return dispatcher_.ledger(); }
  uint32_t channels() const { return dispatcher_.channels(); }

  std::vector<Parameter> parameters() const override;

 private:
  DmaDispatcher& dispatcher_;
};

}  // namespace tpusim::sim
