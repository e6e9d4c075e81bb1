#include "kernels/lax/groups.h"

#include "base/errors.h"
#include "base/text.h"

namespace tpusim::kernels::lax {

namespace {

constexpr size_t kNoGroup = static_cast<size_t>(-1);

}  // namespace

DeviceGroups DeviceGroups::OfAxes(const dsl::Mesh& mesh, const std::vector<std::string>& axes) {
  DeviceGroups g;
  g.group_of_.assign(static_cast<size_t>(mesh.devices()), kNoGroup);
  for (int device = 0; device < mesh.devices(); ++device) {
    if (g.group_of_[device] != kNoGroup) continue;
    // Every device that shares `device`'s coordinates on the other axes, row-major over
    // `axes` in the order they are named.
    std::vector<int> members = {device};
    for (const std::string& axis : axes) {
      const int a = mesh.AxisIndex(axis);
      std::vector<int> next;
      next.reserve(members.size() * static_cast<size_t>(mesh.shape()[a]));
      for (int member : members) {
        std::vector<int> coords = mesh.CoordsOf(member);
        for (int i = 0; i < mesh.shape()[a]; ++i) {
          coords[a] = i;
          next.push_back(mesh.DeviceAt(coords));
        }
      }
      members = std::move(next);
    }
    for (int member : members)
      g.group_of_[member] = g.groups_.size();
    g.group_size_ = static_cast<int>(members.size());
    g.groups_.push_back(std::make_shared<const std::vector<int>>(std::move(members)));
  }
  return g;
}

DeviceGroups DeviceGroups::Explicit(const dsl::Mesh& mesh,
                                    const std::vector<std::vector<int>>& groups,
                                    const std::string& what) {
  auto fail = [&](const std::string& message) {
    throw Error(ErrorKind::kInvalidArgument, what + ": " + message);
  };
  const int n = mesh.devices();
  if (groups.empty()) fail("no replica groups given; give at least one group of devices.");
  DeviceGroups g;
  g.group_of_.assign(static_cast<size_t>(n), kNoGroup);
  g.group_size_ = static_cast<int>(groups[0].size());
  for (const std::vector<int>& group : groups) {
    if (static_cast<int>(group.size()) != g.group_size_ || group.empty()) {
      fail("the replica groups " + base::JoinInts(groups[0]) + " and " + base::JoinInts(group) +
           " differ in size; every group of one collective must have as many devices.");
    }
    for (int device : group) {
      if (device < 0 || device >= n) {
        fail("device " + std::to_string(device) + " in replica group " + base::JoinInts(group) +
             " is outside " + mesh.Describe() + " (devices 0 to " + std::to_string(n - 1) +
             "). Compile for as many devices as the topology has chips.");
      }
      if (g.group_of_[device] != kNoGroup) {
        fail("device " + std::to_string(device) + " is in two replica groups (" +
             base::JoinInts(g.group(g.group_of_[device])) + " and " + base::JoinInts(group) +
             "); each device may be in one group only.");
      }
      g.group_of_[device] = g.groups_.size();
    }
    g.groups_.push_back(std::make_shared<const std::vector<int>>(group));
  }
  for (int device = 0; device < n; ++device) {
    if (g.group_of_[device] == kNoGroup) {
      fail("device " + std::to_string(device) + " of " + mesh.Describe() +
           " is in no replica group; the groups must cover every device (" + std::to_string(n) +
           " here).");
    }
  }
  return g;
}

dsl::Ring DeviceGroups::RingOf(int device) const {
  return dsl::Ring::Of(groups_[group_of_[device]], device);
}

}  // namespace tpusim::kernels::lax
