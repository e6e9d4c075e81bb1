#pragma once

// The halves of the TLM-2.0 transport interfaces that the model's loosely-timed parts share:
// its targets take b_transport, DMI and debug transport and refuse the approximately-timed
// nb_transport_fw; its initiators expect nothing back on the backward path.

#include <tlm>

namespace tpusim::sim {

class LooselyTimedTarget : public tlm::tlm_fw_transport_if<> {
 public:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& payload, tlm::tlm_phase&,
                                     sc_core::sc_time&) override {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
};

class LooselyTimedInitiator : public tlm::tlm_bw_transport_if<> {
 public:
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase&,
                                     sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }
  // DMI pointers are asked for when used and not kept, so by default nothing is dropped.
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
};

}  // namespace tpusim::sim
