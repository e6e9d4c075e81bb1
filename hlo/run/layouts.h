#pragma once

// How an entry parameter's (or the result's) per-device arrays form one global array: from
// its sharding annotation, as a PartitionSpec over the mesh's axes, so a module's inputs are
// the global arrays a JAX user passes (and `compare` can set it beside a hand-written
// program of the same problem). A sharding no PartitionSpec over this mesh expresses (tiles
// that do not follow mesh axes, a maximal sharding, none at all on a module whose devices
// differ) stacks the per-device arrays along a new leading dimension split over every axis.

#include <optional>
#include <string>

#include "dsl/mesh.h"
#include "hlo/run/device_map.h"
#include "hlo/sharding.h"

namespace tpusim::hlo::run {

struct GlobalLayout {
  dsl::ShapeDtype per_device;  // the HLO shape
  dsl::ShapeDtype global;      // what the user passes (or gets back)
  dsl::PartitionSpec spec;
  bool stacked = false;  // the per-device arrays stacked along a new dimension 0
  std::string how;       // "{devices=[8,1]<=[8]} as P(('x', 'y'), None)", for hlo-info
};

// `sharding` absent: replicated when every device computes the same (one device, or the
// module's devices are replicas of one partition... XLA's default), else stacked.
GlobalLayout LayoutOf(const dsl::ShapeDtype& per_device, const std::optional<HloSharding>& sharding,
                      const DeviceMap& devices, const dsl::Mesh& mesh);

}  // namespace tpusim::hlo::run
