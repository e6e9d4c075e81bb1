#include "sim/ici_link.h"

#include "sim/chunk.h"
#include "sim/router.h"

namespace tpusim::sim {

IciLink::IciLink(sc_core::sc_module_name name, const Link& link, LinkTiming& timing, std::string to,
                 ChunkTarget* booking)
    : sc_module(name),
      in("in"),
      out("out"),
      timing_(timing),
      booking_(booking ? *booking : timing),
      link_(link),
      to_(std::move(to)) {
  in.bind(*this);
}

void IciLink::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  auto* chunk = payload.get_extension<ChunkExtension>();
  if (!chunk) {  // only the model's DMA chunks cross links
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (chunk->signal) [[unlikely]] {
    booking_.BookSignal(chunk->schedule, payload.get_data_length(), chunk->label);
  } else {
    booking_.BookChunk(chunk->schedule, payload.get_data_length(), chunk->transfer, chunk->label);
  }
  // The next router reads the schedule, not the delay: it is left as it came.
  if (chunk->forward) {
    out->b_transport(payload, delay);
  } else {
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }
}

void IciLink::Connect(Router& next) {
  out.bind(next.in);
  next_ = &next;
}

bool IciLink::get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
  return out->get_direct_mem_ptr(payload, dmi);
}

unsigned int IciLink::transport_dbg(tlm::tlm_generic_payload& payload) {
  return out->transport_dbg(payload);
}

std::vector<Parameter> IciLink::parameters() const {
  return {{"to", to_},
          {"bandwidth", FormatRate(timing_.port.bytes_per_second())},
          {"latency", FormatTime(timing_.latency)}};
}

}  // namespace tpusim::sim
