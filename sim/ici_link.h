#pragma once

// One direction of an ICI link between two chips' routers (`slice.chip_1_3.ici_x+`), with
// its own bandwidth and latency. A DMA chunk's write transaction passes through it: the
// link holds itself for the chunk's bytes in its earliest free gap (ChunkSchedule decides
// when the chunk's head can use it), then forwards the transaction to the next router,
// which the head reaches `latency` after it leaves. DMI and debug transport pass through.
// A DMA engine that already knows a chunk's path (ChunkExtension::forward false) calls each
// hop itself, and the link then only books. A semaphore signal crosses the same way, as a
// small packet that does not wait for the chunks booked here (LinkTiming::BookSignal).

#include <string>
#include <systemc>
#include <tlm>

#include "sim/bandwidth_port.h"
#include "sim/base_names.h"
#include "sim/chunk.h"
#include "sim/loosely_timed.h"
#include "sim/parameters.h"
#include "sim/port_timing.h"
#include "sim/torus.h"

namespace tpusim::sim {

class Router;

class IciLink : public sc_core::sc_module,
                public LooselyTimedTarget,
                public TimedTarget,
                public Described {
 public:
  // `timing` is the link's bandwidth, latency and calendar, kept by the slice
  // (sim/port_timing.h); `to` names the chip it reaches. A DCN link (sim/dcn.h) passes the
  // host NIC it leaves by as `timing` and books chunks through `booking` (that NIC, then the
  // receiving host's).
  IciLink(sc_core::sc_module_name name, const Link& link, LinkTiming& timing, std::string to,
          ChunkTarget* booking = nullptr);

  // From the router of the chip it leaves. Only the forward path crosses a link, so an export
  // of the transport interface stands in for a whole target socket (half the SystemC
  // objects, on every link of a pod).
  sc_core::sc_export<tlm::tlm_fw_transport_if<>> in;
  // To the router of the chip it reaches, for the same reason a port, not a socket.
  sc_core::sc_port<tlm::tlm_fw_transport_if<>> out;

  const Link& link() const { return link_; }
  bool over_dcn() const { return link_.direction == 0; }  // as Torus::IsDcn
  Picoseconds latency() const { return timing_.latency; }
  BandwidthPort& port() { return timing_.port; }
  // Binds `out` to the router of the chip the link reaches.
  void Connect(Router& next);
  Router& next() { return *next_; }

  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) override;
  ChunkTarget& chunk_timing() override { return booking_; }

  std::vector<Parameter> parameters() const override;

 private:
  LinkTiming& timing_;
  ChunkTarget& booking_;  // timing_, but for a DCN link
  Router* next_ = nullptr;
  Link link_;
  std::string to_;  // the chip it reaches, for describe
};

}  // namespace tpusim::sim
