#pragma once

// The data-center network (DCN) between the slices of a multi-slice topology
// (config::MultisliceConfig). Every host (dcn.chips_per_host consecutive chips of one slice) has
// a NIC with a port out and a port in, each moving dcn.nic_bandwidth_bytes_per_s, which its chips
// share; the data center's switches join every host to every other. A chunk that crosses to
// another slice leaves by its chip's DCN link (Torus): it holds its host's NIC out, reaches the
// other host dcn.latency_ns later (cut-through, as an ICI hop), holds that host's NIC in and
// lands on the counterpart chip, from where ICI takes it on. Both NIC ports are LinkTimings, so a
// chunk's schedule sees two link hops; an idle NIC costs nothing.

#include <memory>
#include <vector>

#include "base/engine.h"
#include "sim/base_names.h"
#include "sim/chunk.h"
#include "sim/port_timing.h"
#include "topologies/topology.pb.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class SliceState;

// One chip's DCN link to another slice: its host's NIC out, then the receiving host's NIC in.
class DcnHopTiming final : public ChunkTarget {
 public:
  DcnHopTiming(LinkTiming& out, LinkTiming& in) : out_(out), in_(in) {}
  void BookChunk(ChunkSchedule& schedule, uint64_t bytes, uint64_t transfer,
                 const std::string* label) override {
    out_.BookChunk(schedule, bytes, transfer, label);
    in_.BookChunk(schedule, bytes, transfer, label);
  }
  void BookSignal(ChunkSchedule& schedule, uint64_t bytes, const std::string* label) override {
    out_.BookSignal(schedule, bytes, label);
    in_.BookSignal(schedule, bytes, label);
  }

 private:
  LinkTiming& out_;
  LinkTiming& in_;
};

class Dcn {
 public:
  // Every host's NIC ports, in `slice`'s arena; with a trace, a process track per slice with a
  // track per port. `topology` is loaded (its mesh starts with the slice axis).
  Dcn(SliceState& slice, const config::Topology& topology);

  uint32_t HostOf(ChipId chip) const { return chip / chips_per_host_; }
  LinkTiming& out(ChipId chip) { return *out_[HostOf(chip)]; }
  LinkTiming& in(ChipId chip) { return *in_[HostOf(chip)]; }
  Picoseconds latency() const { return latency_; }

  // Each NIC port's busy time and bytes, the port out first, as RunStats::links lists links
  // (named "slice 1 host 3 NIC out"; `chip` is the host's first chip).
  void AddStats(std::vector<PortStats>& links) const;
  void FlushTrace();

 private:
  uint32_t chips_per_host_;
  Picoseconds latency_;
  std::vector<LinkTiming*> out_;  // by host; the slice's arena owns them
  std::vector<LinkTiming*> in_;
};

}  // namespace tpusim::sim
