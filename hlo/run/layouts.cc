#include "hlo/run/layouts.h"

#include <algorithm>
#include <functional>

namespace tpusim::hlo::run {

namespace {

GlobalLayout Stacked(const dsl::ShapeDtype& per_device, const dsl::Mesh& mesh,
                     const std::string& why) {
  GlobalLayout layout;
  layout.per_device = per_device;
  layout.stacked = true;
  dsl::Shape global = per_device.shape;
  global.insert(global.begin(), mesh.devices());
  layout.global = {global, per_device.dtype};
  std::vector<dsl::PartitionSpec::Entry> entries = {dsl::PartitionSpec::Entry(mesh.axis_names())};
  for (size_t d = 0; d < per_device.shape.size(); ++d)
    entries.emplace_back(nullptr);
  layout.spec = dsl::PartitionSpec(entries);
  layout.how =
      why + "; per-device arrays stacked along a new dimension 0 as " + layout.spec.Describe();
  return layout;
}

// Each device's tile coordinates (one per data dimension), from the tile assignment.
std::optional<std::vector<dsl::Shape>> TileCoordinates(const HloSharding& s,
                                                       const DeviceMap& devices, size_t rank) {
  const auto& dims = s.tile_assignment_dimensions;
  std::vector<dsl::Shape> coords(static_cast<size_t>(devices.devices()));
  std::vector<bool> seen(coords.size(), false);
  for (size_t i = 0; i < s.tile_assignment_devices.size(); ++i) {
    const int64_t id = s.tile_assignment_devices[i];
    if (id < 0 || id >= devices.devices()) return std::nullopt;
    const int logical = devices.LogicalOf(id);
    dsl::Shape index(dims.size());
    int64_t rest = static_cast<int64_t>(i);
    for (size_t d = dims.size(); d-- > 0;) {
      index[d] = rest % dims[d];
      rest /= dims[d];
    }
    index.resize(rank);
    coords[static_cast<size_t>(logical)] = index;
    seen[static_cast<size_t>(logical)] = true;
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) return std::nullopt;
  return coords;
}

// A PartitionSpec whose blocks put every device at its tile coordinates, searching every
// assignment of the mesh's (non-trivial) axes to data dimensions, in every order.
std::optional<dsl::PartitionSpec> Factor(const std::vector<dsl::Shape>& coords,
                                         const std::vector<int64_t>& tiles, const dsl::Mesh& mesh) {
  std::vector<int> axes;
  for (int a = 0; a < static_cast<int>(mesh.shape().size()); ++a) {
    if (mesh.shape()[a] > 1) axes.push_back(a);
  }
  const size_t rank = tiles.size();
  std::vector<int> target(axes.size(), -1);  // data dimension per axis, -1: replicated
  std::optional<dsl::PartitionSpec> found;
  auto matches = [&](const std::vector<std::vector<int>>& order) {
    for (size_t d = 0; d < rank; ++d) {
      int64_t product = 1;
      for (int a : order[d])
        product *= mesh.shape()[a];
      if (product != tiles[d]) return false;
    }
    for (int device = 0; device < mesh.devices(); ++device) {
      const std::vector<int> c = mesh.CoordsOf(device);
      for (size_t d = 0; d < rank; ++d) {
        int64_t index = 0;
        for (int a : order[d])
          index = index * mesh.shape()[a] + c[a];
        if (index != coords[static_cast<size_t>(device)][d]) return false;
      }
    }
    return true;
  };
  std::function<void(size_t)> assign = [&](size_t i) {
    if (found) return;
    if (i == axes.size()) {
      std::vector<std::vector<int>> order(rank);
      for (size_t k = 0; k < axes.size(); ++k) {
        if (target[k] >= 0) order[static_cast<size_t>(target[k])].push_back(axes[k]);
      }
      // Every order of the axes within each dimension.
      std::function<void(size_t)> permute = [&](size_t d) {
        if (found) return;
        if (d == rank) {
          if (!matches(order)) return;
          std::vector<dsl::PartitionSpec::Entry> entries;
          for (const auto& o : order) {
            std::vector<std::string> names;
            for (int a : o)
              names.push_back(mesh.axis_names()[a]);
            if (names.empty()) {
              entries.emplace_back(nullptr);
            } else if (names.size() == 1) {
              entries.emplace_back(names[0]);
            } else {
              entries.emplace_back(names);
            }
          }
          found = dsl::PartitionSpec(entries);
          return;
        }
        std::sort(order[d].begin(), order[d].end());
        do {
          permute(d + 1);
        } while (!found && std::next_permutation(order[d].begin(), order[d].end()));
      };
      permute(0);
      return;
    }
    for (int t = -1; t < static_cast<int>(rank); ++t) {
      target[i] = t;
      assign(i + 1);
    }
  };
  assign(0);
  return found;
}

}  // namespace

GlobalLayout LayoutOf(const dsl::ShapeDtype& per_device, const std::optional<HloSharding>& sharding,
                      const DeviceMap& devices, const dsl::Mesh& mesh) {
  const bool one_program = devices.devices() == 1 || devices.partitions() == 1;
  if (!sharding) {
    if (one_program && devices.replicas() == 1) {
      return {per_device, per_device, dsl::PartitionSpec(), false, "replicated (no sharding)"};
    }
    return Stacked(per_device, mesh, "no sharding");
  }
  const HloSharding& s = *sharding;
  if (s.kind == HloSharding::Kind::kReplicated) {
    return {per_device, per_device, dsl::PartitionSpec(), false, "{replicated} as P()"};
  }
  if (!s.IsTiled()) return Stacked(per_device, mesh, "a sharding that is not tiled");
  const std::vector<int64_t> tiles = s.DataTileDimensions();
  const size_t rank = per_device.shape.size();
  if (tiles.size() != rank || !s.last_tile_dims.empty()) {
    return Stacked(per_device, mesh, "a tiled sharding with subgroups");
  }
  const auto coords = TileCoordinates(s, devices, rank);
  if (!coords) return Stacked(per_device, mesh, "a tile assignment that misses devices");
  const auto spec = Factor(*coords, tiles, mesh);
  if (!spec) return Stacked(per_device, mesh, "tiles that do not follow " + mesh.Describe());
  dsl::Shape global = per_device.shape;
  for (size_t d = 0; d < rank; ++d)
    global[d] *= tiles[d];
  return {per_device, {global, per_device.dtype}, *spec, false, "tiled as " + spec->Describe()};
}

}  // namespace tpusim::hlo::run
