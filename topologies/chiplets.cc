// Chips of several chiplets (config::ChipletConfig, docs/model.md "Chiplets"): the chiplets
// block's checks, and the chiplet axis the loader puts after the chips' mesh, or takes off to
// validate it again.

#include "topologies/chiplets.h"

#include "topologies/multislice.h"
#include "topologies/topology_loader.h"

namespace tpusim::topologies {

namespace {

bool EndsWithChipletAxis(const config::Topology& topology) {
  const auto& mesh = topology.mesh();
  return topology.has_chiplets() && mesh.axis_names_size() > 0 &&
         mesh.axis_names(mesh.axis_names_size() - 1) == topology.chiplets().axis_name();
}

}  // namespace

void RemoveChipletAxis(const std::string& source, config::Topology& topology) {
  if (!EndsWithChipletAxis(topology)) return;
  auto& mesh = *topology.mutable_mesh();
  const int last = mesh.shape_size() - 1;
  if (last < 1 || mesh.shape(last) != topology.chiplets().count()) {
    FailField(source, "mesh.shape",
              "ends with the chiplet axis '" + topology.chiplets().axis_name() + "' of length " +
                  std::to_string(last < 0 ? 0 : mesh.shape(last)) + ", but chiplets.count is " +
                  std::to_string(topology.chiplets().count()) +
                  "; leave the axis out of the mesh (the loader adds it) or make them agree");
  }
  mesh.mutable_shape()->RemoveLast();
  mesh.mutable_axis_names()->RemoveLast();
  if (mesh.wraparound_size() == last + 1) mesh.mutable_wraparound()->RemoveLast();
}

void AddChipletAxis(const std::string& source, config::Topology& topology) {
  const auto& chiplets = topology.chiplets();
  RequireFieldInRange(source, "chiplets.count", true, uint64_t{chiplets.count()}, "chiplets");
  RequireFieldInRange(source, "chiplets.d2d_bandwidth_bytes_per_s",
                      chiplets.has_d2d_bandwidth_bytes_per_s(),
                      chiplets.d2d_bandwidth_bytes_per_s(), "bandwidth");
  RequireFieldInRange(source, "chiplets.d2d_latency_ns", chiplets.has_d2d_latency_ns(),
                      chiplets.d2d_latency_ns(), "hop_latency");
  const std::string& name = chiplets.axis_name();
  if (name.empty())
    FailField(source, "chiplets.axis_name", "is empty; name the chiplet axis, e.g. \"chiplet\"");
  for (const auto& axis : topology.mesh().axis_names()) {
    if (axis == name)
      FailField(source, "chiplets.axis_name",
                "is '" + name +
                    "', which names an axis of the chips' own mesh too; give the chiplet axis "
                    "another name");
  }
  if (topology.has_multislice()) {
    FailField(source, "chiplets",
              "is given with multislice, and tpusim joins slices of one-device chips over the "
              "DCN, not of chiplets yet; drop multislice or chiplets");
  }
  if (topology.mesh().twisted()) {
    FailField(source, "chiplets",
              "is given with a twisted mesh, and tpusim twists tori of one-device chips, not of "
              "chiplets yet; set mesh.twisted: false or drop chiplets");
  }
  RequireFieldInRange(source,
                      "chiplets.count (times the mesh's " + std::to_string(DeviceCount(topology)) +
                          " chips, the device count)",
                      true, DeviceCount(topology) * chiplets.count(), "device_count");
  auto& mesh = *topology.mutable_mesh();
  mesh.add_shape(chiplets.count());
  mesh.add_axis_names(name);
  mesh.add_wraparound(false);  // the chiplets of a chip are a line, joined by D2D links
}

std::vector<int> OfChip(const config::Topology& topology, const std::vector<int>& coords) {
  if (!EndsWithChipletAxis(topology) || coords.empty() ||
      static_cast<int>(coords.size()) != topology.mesh().shape_size())
    return coords;
  return std::vector<int>(coords.begin(), coords.end() - 1);
}

bool IsD2dDirection(const config::Topology& topology, const std::string& direction) {
  if (!topology.has_chiplets()) return false;
  const std::string& name = topology.chiplets().axis_name();
  return direction.size() == name.size() + 1 && direction.compare(0, name.size(), name) == 0 &&
         (direction.back() == '+' || direction.back() == '-');
}

}  // namespace tpusim::topologies
