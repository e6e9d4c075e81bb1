#pragma once

// The devices of a slice as a grid of named axes. This is the one place device
// coordinates are computed: the DSL's Mesh and the model's Torus both hold a DeviceGrid.

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::base {

using ChipId = uint32_t;
using Coords = std::vector<int>;

class DeviceGrid {
 public:
  // Every axis at least 1 long, one name per axis; the product must fit ChipId (the
  // topology loader bounds it far lower).
  DeviceGrid(std::vector<int> shape, std::vector<std::string> axis_names);

  int axes() const { return static_cast<int>(shape_.size()); }
  uint32_t chips() const { return chips_; }
  const std::vector<int>& shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  int axis_size(int axis) const { return shape_[axis]; }
  // -1 when no axis has that name.
  int AxisIndex(const std::string& name) const;

  // Chip ids are row-major over the shape (the last axis varies fastest), as JAX numbers
  // the devices of a Mesh.
  Coords CoordsOf(ChipId chip) const;
  ChipId ChipAt(const Coords& coords) const;
  bool Contains(const Coords& coords) const;
  std::string Describe(ChipId chip) const;        // "chip 5 (x=1, y=1)"
  std::string DescribeCoords(ChipId chip) const;  // "1_1", as module names spell it

 private:
  std::vector<int> shape_;
  std::vector<std::string> axis_names_;
  uint32_t chips_ = 1;
};

// One leg of a route: `hops` links along `axis`, each in `direction` (+1 or -1).
struct RouteLeg {
  int axis;
  int direction;
  int hops;
};
// The route from `from` to `to`, dimension-ordered: axis 0 first; on an axis with
// wraparound the shorter way round (the + direction on a tie), without it the only way.
// The model routes every DMA and signal this way (sim/torus.h), and the lax collectives
// estimate their costs with it (kernels/lax/cost_model.h).
std::vector<RouteLeg> DimensionOrderedRoute(const DeviceGrid& grid,
                                            const std::vector<bool>& wraparound, ChipId from,
                                            ChipId to);

}  // namespace tpusim::base
