#include "sim/dma_engine.h"

#include "sim/slice_state.h"

namespace tpusim::sim {

DmaEngine::DmaEngine(sc_core::sc_module_name name, SliceState& slice, DmaLedger& ledger, Chip& chip,
                     uint32_t channels, uint64_t chunk_bytes)
    : sc_module(name),
      socket("socket"),
      dispatcher_(
          slice.hot().Make<DmaDispatcher>(slice, ledger, chip, *this, channels, chunk_bytes)) {
  socket.bind(*this);
}

tlm::tlm_sync_enum DmaEngine::nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&,
                                              sc_core::sc_time&) {
  return tlm::TLM_COMPLETED;  // loosely timed: nothing comes back this way
}

void DmaEngine::invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) {
  // DMI pointers are asked for per DMA and never kept, so there is nothing to drop.
}

std::vector<Parameter> DmaEngine::parameters() const {
  return {{"channels", FormatCount(dispatcher_.channels())},
          {"chunk", FormatBytes(dispatcher_.chunk_bytes())}};
}

}  // namespace tpusim::sim
