#pragma once

// Device groups of collectives: replica_groups in all three printed forms, and
// source_target_pairs. The iota form `[G,S]<=[R...]T(P...)` is XLA's compact spelling:
// iota(N) reshaped to R, transposed by the permutation P, flattened, and cut into G groups
// of S devices. For example [4,2]<=[2,4]T(1,0) = {{0,4},{1,5},{2,6},{3,7}}.

#include <cstdint>
#include <utility>
#include <vector>

#include "hlo/attribute.h"

namespace tpusim::hlo {

// More devices than this in one expanded iota, replica-group list or tile assignment are
// refused with an error rather than allocated.
inline constexpr int64_t kMaxExpandedDevices = int64_t{1} << 20;

// `[dims]<=[reshape_dims]T(permutation)`, also the iota tile assignment of a sharding.
struct IotaTileAssignment {
  std::vector<int64_t> dims;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> permutation;  // identity when no T(...) is printed

  // The device ids in row-major order over `dims`: iota reshaped to reshape_dims,
  // transposed by permutation (result dimension k is input dimension permutation[k]),
  // flattened.
  std::vector<int64_t> Expand() const;
};

using ReplicaGroups = std::vector<std::vector<int64_t>>;

// replica_groups={{0,1},{2,3}}, =[2,4]<=[8], =[4,2]<=[2,4]T(1,0), or ={}: one group of all
// devices 0..device_count-1 (device_count > 0: what the groups index, e.g. the module's
// num_partitions for an SPMD collective with use_global_device_ids or a channel_id). Every
// device id must be below device_count and appear at most once.
ReplicaGroups DecodeReplicaGroups(const Attribute& attribute, int64_t device_count);

// source_target_pairs={{0,1},{1,2}}: (source, target) pairs.
std::vector<std::pair<int64_t, int64_t>> DecodeSourceTargetPairs(const Attribute& attribute);

}  // namespace tpusim::hlo
