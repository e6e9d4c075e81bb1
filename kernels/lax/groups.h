#pragma once

// The devices a lax collective runs among. A collective over named mesh axes runs within
// each line (or plane...) of the mesh those axes span, as jax.lax does; an XLA collective
// runs within each of its replica groups, which may be any devices. Either way the
// collective sees groups of one size, each a ring in a fixed order, and every device of the
// mesh in exactly one group.

#include <memory>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/mesh.h"

namespace tpusim::kernels::lax {

class DeviceGroups {
 public:
  // The groups named axes form: each device with every device that differs from it only in
  // those axes, ordered by their row-major index over the axes (in the order named).
  static DeviceGroups OfAxes(const dsl::Mesh& mesh, const std::vector<std::string>& axes);
  // Explicit groups of logical device ids (XLA's replica_groups after the device order is
  // applied). Throws Error(kInvalidArgument) naming `what` when an id is outside the mesh,
  // a device is in two groups or in none, or the groups differ in size.
  static DeviceGroups Explicit(const dsl::Mesh& mesh, const std::vector<std::vector<int>>& groups,
                               const std::string& what);

  int group_size() const { return group_size_; }
  size_t count() const { return groups_.size(); }
  const std::vector<int>& group(size_t i) const { return *groups_[i]; }
  // The group `device` is in, and the ring it forms seen from `device`.
  const std::vector<int>& GroupOf(int device) const { return *groups_[group_of_[device]]; }
  dsl::Ring RingOf(int device) const;

 private:
  std::vector<std::shared_ptr<const std::vector<int>>> groups_;
  std::vector<size_t> group_of_;  // by logical device id
  int group_size_ = 1;
};

}  // namespace tpusim::kernels::lax
