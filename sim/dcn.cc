#include "sim/dcn.h"

#include "sim/slice_state.h"

namespace tpusim::sim {

Dcn::Dcn(SliceState& slice, const config::Topology& topology)
    : chips_per_host_(topology.dcn().chips_per_host()),
      latency_(NanosecondsToTime(topology.dcn().latency_ns())) {
  const Torus& torus = slice.torus();
  const uint32_t hosts = torus.chips() / chips_per_host_;
  const uint32_t hosts_per_slice = hosts / static_cast<uint32_t>(torus.axis_size(0));
  const double bandwidth = topology.dcn().nic_bandwidth_bytes_per_s();
  traces::TraceSink* trace = slice.run().traced() ? &slice.run().trace() : nullptr;
  traces::TrackId process = 0;
  for (uint32_t host = 0; host < hosts; ++host) {
    const uint32_t slice_index = host / hosts_per_slice;
    std::string name = torus.axis_names()[0];
    name += ' ';
    name += std::to_string(slice_index);
    name += " host ";
    name += std::to_string(host % hosts_per_slice);
    name += " NIC";
    traces::TrackId out_track = 0;
    traces::TrackId in_track = 0;
    if (trace) {
      // After the chips' process tracks (ranked by chip id).
      if (host % hosts_per_slice == 0) {
        std::string process_name = torus.axis_names()[0];
        process_name += ' ';
        process_name += std::to_string(slice_index);
        process_name += " DCN";
        process =
            trace->AddProcessTrack(process_name, static_cast<int>(torus.chips() + slice_index));
      }
      const int rank = static_cast<int>(2 * (host % hosts_per_slice));
      out_track = trace->AddTrack(process, name + " out", rank);
      in_track = trace->AddTrack(process, name + " in", rank + 1);
    }
    // The latency rides on the port out: a chunk's head reaches the other host's NIC then.
    out_.push_back(
        &slice.hot().Make<LinkTiming>(name + " out", bandwidth, latency_, trace, out_track));
    in_.push_back(&slice.hot().Make<LinkTiming>(name + " in", bandwidth, 0, trace, in_track));
  }
}

void Dcn::AddStats(std::vector<PortStats>& links) const {
  for (size_t host = 0; host < out_.size(); ++host) {
    const auto first_chip = static_cast<ChipId>(host * chips_per_host_);
    for (const LinkTiming* port : {out_[host], in_[host]}) {
      links.push_back(port->port.Stats(first_chip));
    }
  }
}

void Dcn::FlushTrace() {
  for (size_t host = 0; host < out_.size(); ++host) {
    out_[host]->port.FlushTrace();
    in_[host]->port.FlushTrace();
  }
}

}  // namespace tpusim::sim
