#pragma once

// Where an HLO module's devices run on the simulated slice, and which devices each of its
// collectives joins.
//
// XLA numbers a module's devices by replica and partition; its global device id is
// replica x num_partitions + partition (a JAX program compiled for N devices is one replica
// of N partitions, so its ids are its partition ids). Global device i runs on the mesh's
// logical device order[i]; by default order is the identity, so device i is the topology's
// chip i in row-major order (docs/hlo.md, "Devices").
//
// A collective's replica_groups name replicas, partitions or global ids depending on its
// channel_id and use_global_device_ids (XLA's CollectiveOpGroupMode); Groups() expands them
// to the mesh's logical devices, so a group that is one torus axis runs on that axis and any
// other group routes over several hops, as on hardware.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dsl/mesh.h"
#include "hlo/module.h"

namespace tpusim::hlo::run {

class DeviceMap {
 public:
  // `order`: empty for the identity, else the logical device of each global device id.
  // Throws Error(kInvalidArgument) when the module's num_partitions x replica_count differs
  // from the mesh's devices (naming both and the fix), or `order` is not a permutation.
  DeviceMap(const Module& module, const dsl::Mesh& mesh, const std::vector<int>& order);

  int devices() const { return static_cast<int>(logical_.size()); }
  int64_t partitions() const { return partitions_; }
  int64_t replicas() const { return replicas_; }
  int LogicalOf(int64_t global_id) const { return logical_[static_cast<size_t>(global_id)]; }
  int64_t GlobalOf(int logical) const { return global_[static_cast<size_t>(logical)]; }
  int64_t PartitionOf(int logical) const { return GlobalOf(logical) % partitions_; }
  int64_t ReplicaOf(int logical) const { return GlobalOf(logical) / partitions_; }

  // The device groups of a collective (all-gather, all-reduce, reduce-scatter, all-to-all,
  // collective-broadcast), as logical mesh devices, each group in its printed order.
  std::vector<std::vector<int>> Groups(const Instruction& collective) const;
  // collective-permute's (source, target) pairs as logical mesh devices.
  std::vector<std::pair<int, int>> Pairs(const Instruction& collective) const;

  // "axis y", "axes (x, y)" or "several hops (not a mesh axis)": where a group falls.
  std::string DescribeGroup(const std::vector<int>& group) const;
  // "y, 1 hop", "y, 3 hops", "x and y, 2 hops", "itself": where a pair's transfer goes.
  std::string DescribePair(int source, int target) const;

 private:
  const dsl::Mesh& mesh_;
  int64_t partitions_ = 1;
  int64_t replicas_ = 1;
  std::vector<int> logical_;     // by global id
  std::vector<int64_t> global_;  // by logical id
};

// --device-order "3,2,1,0": the logical device of each global id; "" for the identity.
// Throws Error(kInvalidArgument) for text that is not a list of integers.
std::vector<int> ParseDeviceOrder(const std::string& text);

}  // namespace tpusim::hlo::run
