// Multi-slice topologies (config::MultisliceConfig, docs/model.md "Multi-slice"): the dcn block's
// checks, and the slice axis the loader puts in front of a multi-slice mesh, or takes off to
// validate it again.

#include "topologies/multislice.h"

#include <algorithm>

#include "topologies/topology_loader.h"

namespace tpusim::topologies {

void ValidateDcn(const std::string& source, const config::DcnConfig& dcn) {
  RequireFieldInRange(source, "dcn.chips_per_host", dcn.has_chips_per_host(),
                      uint64_t{dcn.chips_per_host()}, "chips_per_host");
  RequireFieldInRange(source, "dcn.nic_bandwidth_bytes_per_s", dcn.has_nic_bandwidth_bytes_per_s(),
                      dcn.nic_bandwidth_bytes_per_s(), "bandwidth");
  RequireFieldInRange(source, "dcn.latency_ns", dcn.has_latency_ns(), dcn.latency_ns(), "latency");
}

// A loaded multi-slice topology's mesh starts with the slice axis (AddSliceAxis); validating it
// again takes that axis off first, so the slice's own mesh is checked as a file gives it.
void RemoveSliceAxis(const std::string& source, config::Topology& topology) {
  const auto& multislice = topology.multislice();
  auto& mesh = *topology.mutable_mesh();
  if (mesh.axis_names_size() == 0 || mesh.axis_names(0) != multislice.axis_name()) return;
  if (mesh.shape_size() < 2 || mesh.shape(0) != multislice.slices()) {
    FailField(source, "mesh.shape",
              "starts with the multislice axis '" + multislice.axis_name() + "' of length " +
                  std::to_string(mesh.shape(0)) + ", but multislice.slices is " +
                  std::to_string(multislice.slices()) +
                  "; leave the axis out of the mesh (the loader adds it) or make them agree");
  }
  mesh.mutable_shape()->erase(mesh.mutable_shape()->begin());
  mesh.mutable_axis_names()->erase(mesh.mutable_axis_names()->begin());
  if (mesh.wraparound_size() > 0)
    mesh.mutable_wraparound()->erase(mesh.mutable_wraparound()->begin());
}

// `multislice.slices` copies of the validated slice mesh: the slice axis goes in front, so chip
// ids count slice by slice and every host's chips stay consecutive.
void AddSliceAxis(const std::string& source, config::Topology& topology) {
  const auto& multislice = topology.multislice();
  RequireFieldInRange(source, "multislice.slices", multislice.has_slices(),
                      uint64_t{multislice.slices()}, "slices");
  if (!topology.has_dcn()) {
    FailField(source, "dcn",
              "is missing, but multislice joins slices over the data-center network; give dcn { "
              "chips_per_host nic_bandwidth_bytes_per_s latency_ns } (the v5e and v5p presets "
              "carry their generation's)");
  }
  if (topology.mesh().twisted()) {
    FailField(source, "multislice",
              "joins twisted slices, and tpusim routes a twisted torus or slices over the DCN, "
              "not both yet; join the plain slices of the same shape (mesh.twisted: false)");
  }
  const std::string& name = multislice.axis_name();
  if (name.empty())
    FailField(source, "multislice.axis_name", "is empty; name the slice axis, e.g. \"slice\"");
  auto& mesh = *topology.mutable_mesh();
  for (const auto& axis : mesh.axis_names()) {
    if (axis == name)
      FailField(source, "multislice.axis_name",
                "is '" + name +
                    "', which names an axis of the slice's own mesh too; give the slice "
                    "axis another name");
  }
  const uint64_t slice_chips = DeviceCount(topology);
  const uint32_t per_host = topology.dcn().chips_per_host();
  if (slice_chips % per_host != 0) {
    FailField(source, "dcn.chips_per_host",
              "is " + std::to_string(per_host) + ", which does not divide the slice's " +
                  std::to_string(slice_chips) +
                  " chips; a host's chips belong to one slice, so give "
                  "a divisor of " +
                  std::to_string(slice_chips));
  }
  RequireFieldInRange(source,
                      "multislice.slices (times the slice's " + std::to_string(slice_chips) +
                          " chips, the chip count)",
                      true, slice_chips * multislice.slices(), "chip_count");
  mesh.mutable_shape()->Add(multislice.slices());
  std::rotate(mesh.mutable_shape()->rbegin(), mesh.mutable_shape()->rbegin() + 1,
              mesh.mutable_shape()->rend());
  mesh.add_axis_names(name);
  std::rotate(mesh.mutable_axis_names()->rbegin(), mesh.mutable_axis_names()->rbegin() + 1,
              mesh.mutable_axis_names()->rend());
  mesh.add_wraparound(false);  // the DCN is switched: no axis to wrap
  std::rotate(mesh.mutable_wraparound()->rbegin(), mesh.mutable_wraparound()->rbegin() + 1,
              mesh.mutable_wraparound()->rend());
}

std::vector<int> InSlice(const config::Topology& topology, const std::vector<int>& coords) {
  if (!topology.has_multislice() || coords.empty() ||
      static_cast<int>(coords.size()) != topology.mesh().shape_size())
    return coords;
  return std::vector<int>(coords.begin() + 1, coords.end());
}

config::Topology WithSlices(config::Topology topology, uint32_t slices, const std::string& source) {
  if (topology.has_multislice()) {
    // Back to one slice's mesh, then the new count.
    RemoveSliceAxis(source, topology);
  }
  topology.mutable_multislice()->set_slices(slices);
  std::string name = topology.name();
  name += '-';
  name += std::to_string(slices);
  name += "slices";
  ValidateTopology(topology, source + " with multislice.slices " + std::to_string(slices));
  topology.set_name(name);
  return topology;
}

}  // namespace tpusim::topologies
