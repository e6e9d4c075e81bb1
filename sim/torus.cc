#include "sim/torus.h"

#include <cassert>

namespace tpusim::sim {

Torus::Torus(std::vector<int> shape, std::vector<std::string> axis_names,
             std::vector<bool> wraparound)
    : shape_(std::move(shape)),
      axis_names_(std::move(axis_names)),
      wraparound_(std::move(wraparound)) {
  for (int n : shape_)
    chips_ *= static_cast<uint32_t>(n);
  link_index_.assign(static_cast<size_t>(chips_) * axes() * 2, -1);
  for (ChipId chip = 0; chip < chips_; ++chip) {
    const Coords here = CoordsOf(chip);
    for (int axis = 0; axis < axes(); ++axis) {
      const int n = shape_[axis];
      if (n < 2) continue;
      for (int direction : {+1, -1}) {
        Coords there = here;
        there[axis] += direction;
        if (there[axis] < 0 || there[axis] >= n) {
          if (!wraparound_[axis]) continue;
          there[axis] = (there[axis] + n) % n;
        }
        link_index_[(static_cast<size_t>(chip) * axes() + axis) * 2 + (direction > 0 ? 0 : 1)] =
            static_cast<int64_t>(links_.size());
        links_.push_back(Link{chip, ChipAt(there), axis, direction,
                              axis_names_[axis] + (direction > 0 ? "+" : "-")});
      }
    }
  }
}

int Torus::AxisIndex(const std::string& name) const {
  for (int i = 0; i < axes(); ++i) {
    if (axis_names_[i] == name) return i;
  }
  return -1;
}

Coords Torus::CoordsOf(ChipId chip) const {
  Coords coords(shape_.size());
  for (int axis = axes() - 1; axis >= 0; --axis) {
    coords[axis] = static_cast<int>(chip % shape_[axis]);
    chip /= shape_[axis];
  }
  return coords;
}

ChipId Torus::ChipAt(const Coords& coords) const {
  assert(Contains(coords));
  ChipId chip = 0;
  for (int axis = 0; axis < axes(); ++axis)
    chip = chip * shape_[axis] + coords[axis];
  return chip;
}

bool Torus::Contains(const Coords& coords) const {
  if (coords.size() != shape_.size()) return false;
  for (int axis = 0; axis < axes(); ++axis) {
    if (coords[axis] < 0 || coords[axis] >= shape_[axis]) return false;
  }
  return true;
}

std::string Torus::Describe(ChipId chip) const {
  const Coords coords = CoordsOf(chip);
  std::string text = "chip " + std::to_string(chip) + " (";
  for (int axis = 0; axis < axes(); ++axis) {
    if (axis) text += ", ";
    text += axis_names_[axis] + "=" + std::to_string(coords[axis]);
  }
  return text + ")";
}

int64_t Torus::LinkFrom(ChipId chip, int axis, int direction) const {
  return link_index_[(static_cast<size_t>(chip) * axes() + axis) * 2 + (direction > 0 ? 0 : 1)];
}

std::vector<LinkId> Torus::LinksFrom(ChipId chip) const {
  std::vector<LinkId> out;
  for (int axis = 0; axis < axes(); ++axis) {
    for (int direction : {+1, -1}) {
      const int64_t link = LinkFrom(chip, axis, direction);
      if (link >= 0) out.push_back(static_cast<LinkId>(link));
    }
  }
  return out;
}

std::vector<LinkId> Torus::Route(ChipId from, ChipId to) const {
  std::vector<LinkId> route;
  Coords at = CoordsOf(from);
  const Coords target = CoordsOf(to);
  for (int axis = 0; axis < axes(); ++axis) {
    const int n = shape_[axis];
    const int forward = ((target[axis] - at[axis]) % n + n) % n;
    if (forward == 0) continue;
    int direction;
    int hops;
    if (wraparound_[axis]) {
      const int backward = n - forward;
      direction = forward <= backward ? +1 : -1;
      hops = forward <= backward ? forward : backward;
    } else {
      direction = target[axis] > at[axis] ? +1 : -1;
      hops = target[axis] > at[axis] ? target[axis] - at[axis] : at[axis] - target[axis];
    }
    for (int h = 0; h < hops; ++h) {
      const int64_t link = LinkFrom(ChipAt(at), axis, direction);
      assert(link >= 0);
      route.push_back(static_cast<LinkId>(link));
      at[axis] = ((at[axis] + direction) % n + n) % n;
    }
  }
  return route;
}

}  // namespace tpusim::sim
