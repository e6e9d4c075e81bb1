// Device ids: how a copy's or signal's target is written (mesh coordinates, {axis: index}
// or a logical id) and how a kernel turns it into a logical device, with the errors of a
// target outside the mesh.

#include "base/errors.h"
#include "dsl/kernel.h"

namespace tpusim::dsl {

std::string DeviceId::Describe() const {
  if (logical_ >= 0) return "device " + std::to_string(logical_);
  std::string s;
  if (by_axes_) {
    s = "{";
    for (size_t i = 0; i < axes_.size(); ++i)
      s += (i ? ", '" : "'") + axes_[i].first + "': " + std::to_string(axes_[i].second);
    return s + "}";
  }
  s = "(";
  for (size_t i = 0; i < coords_.size(); ++i)
    s += (i ? ", " : "") + std::to_string(coords_[i]);
  return s + ")";
}

int Kernel::ResolveDevice(const DeviceId& device) const {
  const Mesh& m = mesh();
  if (device.logical_ >= 0) {
    if (device.logical_ >= m.devices()) {
      throw Error(ErrorKind::kKernelMisuse, "device id " + device.Describe() + " is outside " +
                                                m.Describe() + ", which has " +
                                                std::to_string(m.devices()) + " devices (0 to " +
                                                std::to_string(m.devices() - 1) + ").");
    }
    return device.logical_;
  }
  std::vector<int> coords = device.by_axes_ ? m.CoordsOf(device_id()) : device.coords_;
  if (device.by_axes_) {
    std::vector<bool> given(coords.size(), false);
    for (const auto& [axis, index] : device.axes_) {
      const int a = m.AxisIndex(axis);
      if (given[a]) {
        throw Error(ErrorKind::kKernelMisuse,
                    "device id " + device.Describe() + " names axis '" + axis +
                        "' twice; give each axis once (the axes it leaves out keep this "
                        "device's index).");
      }
      given[a] = true;
      coords[a] = index;
    }
  } else if (coords.size() != m.shape().size()) {
    throw Error(ErrorKind::kKernelMisuse, "device id " + device.Describe() + " has " +
                                              std::to_string(coords.size()) + " coordinates, but " +
                                              m.Describe() + " has " +
                                              std::to_string(m.shape().size()) +
                                              " axes; give one per axis or use {axis: index}.");
  }
  for (size_t a = 0; a < coords.size(); ++a) {
    if (coords[a] < 0 || coords[a] >= m.shape()[a]) {
      throw Error(ErrorKind::kKernelMisuse,
                  "device id " + device.Describe() + " is outside " + m.Describe() + ": axis '" +
                      m.axis_names()[a] + "' has indices 0 to " + std::to_string(m.shape()[a] - 1) +
                      ". Wrap ring neighbours with % axis_size.");
    }
  }
  return m.DeviceAt(coords);
}

}  // namespace tpusim::dsl
