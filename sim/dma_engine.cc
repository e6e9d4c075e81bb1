#include "sim/dma_engine.h"

#include "sim/slice_state.h"

namespace tpusim::sim {

DmaEngine::DmaEngine(sc_core::sc_module_name name, SliceState& slice, DmaLedger& ledger, Chip& chip,
                     uint32_t channels, uint64_t chunk_bytes, Picoseconds issue_latency)
    : sc_module(name),
      socket("socket"),
      dispatcher_(slice.hot().Make<DmaDispatcher>(slice, ledger, chip, *this, channels, chunk_bytes,
                                                  issue_latency)) {
  socket.bind(*this);
}

std::vector<Parameter> DmaEngine::parameters() const {
  return {{"channels", FormatCount(dispatcher_.channels())},
          {"chunk", FormatBytes(dispatcher_.chunk_bytes())},
          {"issue", FormatTime(dispatcher_.issue_latency())}};
}

}  // namespace tpusim::sim
