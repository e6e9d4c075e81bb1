#pragma once

// Chip coordinates, the ICI links that exist between torus neighbours (one per direction),
// and dimension-ordered routes over them.

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::sim {

using ChipId = uint32_t;
using LinkId = uint32_t;
using Coords = std::vector<int>;

struct Link {
  ChipId from;
  ChipId to;
  int axis;
  int direction;     // +1 or -1
  std::string name;  // "x+", "y-"
};

class Torus {
 public:
  Torus(std::vector<int> shape, std::vector<std::string> axis_names, std::vector<bool> wraparound);

  int axes() const { return static_cast<int>(shape_.size()); }
  uint32_t chips() const { return chips_; }
  const std::vector<int>& shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  bool wraparound(int axis) const { return wraparound_[axis]; }
  int axis_size(int axis) const { return shape_[axis]; }
  // -1 when no axis has that name.
  int AxisIndex(const std::string& name) const;

  // Chip ids are row-major over the mesh shape (the last axis varies fastest), as JAX
  // numbers the devices of a Mesh.
  Coords CoordsOf(ChipId chip) const;
  ChipId ChipAt(const Coords& coords) const;
  bool Contains(const Coords& coords) const;
  std::string Describe(ChipId chip) const;  // "chip 5 (x=1, y=1)"

  // The link leaving `chip` along `axis` in `direction`, or -1 when there is none (the
  // edge of an axis without wraparound).
  int64_t LinkFrom(ChipId chip, int axis, int direction) const;
  const Link& link(LinkId id) const { return links_[id]; }
  const std::vector<Link>& links() const { return links_; }
  // Links leaving `chip`, in axis order, + before -.
  std::vector<LinkId> LinksFrom(ChipId chip) const;

  // Dimension-ordered: axis 0 first. On an axis with wraparound the shorter way round is
  // taken (the + direction on a tie); without wraparound the only way there.
  std::vector<LinkId> Route(ChipId from, ChipId to) const;

 private:
  std::vector<int> shape_;
  std::vector<std::string> axis_names_;
  std::vector<bool> wraparound_;
  uint32_t chips_ = 1;
  std::vector<Link> links_;
  std::vector<int64_t> link_index_;  // (chip * axes + axis) * 2 + (direction > 0 ? 0 : 1)
};

}  // namespace tpusim::sim
