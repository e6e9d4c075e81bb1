#include "base/device_grid.h"

#include <cassert>
#include <charconv>
#include <cstdint>

namespace tpusim::base {

DeviceGrid::DeviceGrid(std::vector<int> shape, std::vector<std::string> axis_names)
    : shape_(std::move(shape)), axis_names_(std::move(axis_names)) {
  assert(axis_names_.size() == shape_.size());
  for (int n : shape_)
    chips_ *= static_cast<uint32_t>(n);
}

int DeviceGrid::AxisIndex(const std::string& name) const {
  for (int i = 0; i < axes(); ++i) {
    if (axis_names_[i] == name) return i;
  }
  return -1;
}

namespace {
// Calls `at(axis, coordinate)` for each axis of `chip` in axis order (the last axis varies
// fastest): CoordsOf, and the descriptions that append the coordinates without a vector.
template <typename At>
void ForEachCoordinate(const std::vector<int>& shape, uint32_t chips, ChipId chip, At at) {
  uint32_t stride = chips;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    stride /= static_cast<uint32_t>(shape[axis]);
    at(static_cast<int>(axis), chip / stride % static_cast<uint32_t>(shape[axis]));
  }
}

// Appends `value` in decimal: Describe and DescribeCoords name every chip's modules and
// tracks when a slice is built, and std::to_string's temporaries were most of their cost.
void AppendNumber(std::string& text, uint32_t value) {
  char digits[10];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  text.append(digits, end);
}
}  // namespace

Coords DeviceGrid::CoordsOf(ChipId chip) const {
  Coords coords(shape_.size());
  ForEachCoordinate(shape_, chips_, chip,
                    [&](int axis, uint32_t c) { coords[axis] = static_cast<int>(c); });
  return coords;
}

ChipId DeviceGrid::ChipAt(const Coords& coords) const {
  assert(Contains(coords));
  ChipId chip = 0;
  for (int axis = 0; axis < axes(); ++axis)
    chip = chip * static_cast<uint32_t>(shape_[axis]) + static_cast<uint32_t>(coords[axis]);
  return chip;
}

bool DeviceGrid::Contains(const Coords& coords) const {
  if (coords.size() != shape_.size()) return false;
  for (int axis = 0; axis < axes(); ++axis) {
    if (coords[axis] < 0 || coords[axis] >= shape_[axis]) return false;
  }
  return true;
}

std::string DeviceGrid::Describe(ChipId chip) const {
  std::string text;
  text.reserve(32);
  text += "chip ";
  AppendNumber(text, chip);
  text += " (";
  ForEachCoordinate(shape_, chips_, chip, [&](int axis, uint32_t c) {
    if (axis) text += ", ";
    text += axis_names_[axis];
    text += '=';
    AppendNumber(text, c);
  });
  text += ')';
  return text;
}

std::string DeviceGrid::DescribeCoords(ChipId chip) const {
  std::string text;
  ForEachCoordinate(shape_, chips_, chip, [&](int axis, uint32_t c) {
    if (axis) text += '_';
    AppendNumber(text, c);
  });
  return text;
}

std::vector<RouteLeg> DimensionOrderedRoute(const DeviceGrid& grid,
                                            const std::vector<bool>& wraparound, ChipId from,
                                            ChipId to) {
  std::vector<RouteLeg> legs;
  const Coords at = grid.CoordsOf(from);
  const Coords target = grid.CoordsOf(to);
  for (int axis = 0; axis < grid.axes(); ++axis) {
    const int n = grid.axis_size(axis);
    const int forward = ((target[axis] - at[axis]) % n + n) % n;
    if (forward == 0) continue;
    if (wraparound[axis]) {
      const int backward = n - forward;
      legs.push_back(forward <= backward ? RouteLeg{axis, +1, forward}
                                         : RouteLeg{axis, -1, backward});
    } else {
      legs.push_back(target[axis] > at[axis] ? RouteLeg{axis, +1, target[axis] - at[axis]}
                                             : RouteLeg{axis, -1, at[axis] - target[axis]});
    }
  }
  return legs;
}

}  // namespace tpusim::base
