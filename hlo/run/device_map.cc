#include "hlo/run/device_map.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "base/errors.h"
#include "base/text.h"
#include "hlo/replica_groups.h"
#include "kernels/params.h"

namespace tpusim::hlo::run {

namespace {

[[noreturn]] void Fail(const std::string& message) {
  throw Error(ErrorKind::kInvalidArgument, message);
}

// XLA's CollectiveOpGroupMode, from channel_id and use_global_device_ids.
enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

GroupMode ModeOf(const Instruction& collective) {
  const bool channel = collective.FindAttribute("channel_id") != nullptr;
  const Attribute* global = collective.FindAttribute("use_global_device_ids");
  if (!channel) return GroupMode::kCrossReplica;
  if (!global) return GroupMode::kCrossPartition;
  return DecodeBool(*global) ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

}  // namespace

DeviceMap::DeviceMap(const Module& module, const dsl::Mesh& mesh, const std::vector<int>& order)
    : mesh_(mesh), partitions_(module.num_partitions), replicas_(module.replica_count) {
  const int64_t n = partitions_ * replicas_;
  if (partitions_ < 1 || replicas_ < 1 || n != mesh.devices()) {
    Fail("the module was compiled for " + std::to_string(n) +
         " devices (num_partitions=" + std::to_string(partitions_) +
         ", replica_count=" + std::to_string(replicas_) + "), but " + mesh.Describe() + " has " +
         std::to_string(mesh.devices()) + " chips. Run it on a topology with " + std::to_string(n) +
         " chips, or compile it for this one (jax.config.update('jax_num_cpu_devices', " +
         std::to_string(mesh.devices()) + ") before jax starts, on a CPU host).");
  }
  logical_.resize(static_cast<size_t>(n));
  global_.assign(static_cast<size_t>(n), -1);
  if (!order.empty() && static_cast<int64_t>(order.size()) != n) {
    throw kernels::ParamError({"device_order"},
                              "device_order lists " + std::to_string(order.size()) +
                                  " devices, but the module has " + std::to_string(n) +
                                  "; give the mesh device of every device id 0 to " +
                                  std::to_string(n - 1) + ".");
  }
  for (int64_t id = 0; id < n; ++id) {
    const int logical = order.empty() ? static_cast<int>(id) : order[static_cast<size_t>(id)];
    if (logical < 0 || logical >= n || global_[static_cast<size_t>(logical)] >= 0) {
      throw kernels::ParamError(
          {"device_order"},
          "device_order " + base::JoinInts(order) + " is not a permutation of 0 to " +
              std::to_string(n - 1) + ": mesh device " + std::to_string(logical) +
              (logical < 0 || logical >= n ? " does not exist." : " appears twice."));
    }
    logical_[static_cast<size_t>(id)] = logical;
    global_[static_cast<size_t>(logical)] = id;
  }
}

std::vector<std::vector<int>> DeviceMap::Groups(const Instruction& collective) const {
  const GroupMode mode = ModeOf(collective);
  const Attribute* attribute = collective.FindAttribute("replica_groups");
  // What the printed ids index.
  const int64_t count = mode == GroupMode::kCrossPartition ? partitions_
                        : mode == GroupMode::kFlattenedId  ? partitions_ * replicas_
                                                           : replicas_;
  ReplicaGroups printed;
  if (attribute) {
    printed = DecodeReplicaGroups(*attribute, count);
  } else {
    printed.emplace_back();
    for (int64_t i = 0; i < count; ++i)
      printed.back().push_back(i);
  }
  std::vector<std::vector<int64_t>> global;
  switch (mode) {
    case GroupMode::kCrossReplica:
      for (int64_t p = 0; p < partitions_; ++p) {
        for (const auto& g : printed) {
          global.emplace_back();
          for (int64_t r : g)
            global.back().push_back(r * partitions_ + p);
        }
      }
      break;
    case GroupMode::kCrossPartition:
      for (int64_t r = 0; r < replicas_; ++r) {
        for (const auto& g : printed) {
          global.emplace_back();
          for (int64_t p : g)
            global.back().push_back(r * partitions_ + p);
        }
      }
      break;
    case GroupMode::kCrossReplicaAndPartition:
      for (const auto& g : printed) {
        global.emplace_back();
        for (int64_t r : g) {
          for (int64_t p = 0; p < partitions_; ++p)
            global.back().push_back(r * partitions_ + p);
        }
      }
      break;
    case GroupMode::kFlattenedId:
      global = printed;
      break;
  }
  std::vector<std::vector<int>> groups;
  for (const auto& g : global) {
    groups.emplace_back();
    for (int64_t id : g)
      groups.back().push_back(LogicalOf(id));
  }
  return groups;
}

std::vector<std::pair<int, int>> DeviceMap::Pairs(const Instruction& collective) const {
  const Attribute* attribute = collective.FindAttribute("source_target_pairs");
  std::vector<std::pair<int64_t, int64_t>> printed;
  if (attribute) printed = DecodeSourceTargetPairs(*attribute);
  // With a channel_id the pairs name partitions (within each replica), else replicas.
  const bool partitions = collective.FindAttribute("channel_id") != nullptr;
  const int64_t count = partitions ? partitions_ : replicas_;
  std::vector<std::pair<int, int>> pairs;
  for (int64_t outer = 0; outer < (partitions ? replicas_ : partitions_); ++outer) {
    for (const auto& [s, t] : printed) {
      if (s < 0 || s >= count || t < 0 || t >= count) {
        FailAt(attribute->ValueLocation(), "the pair {" + std::to_string(s) + "," +
                                               std::to_string(t) + "} names a " +
                                               (partitions ? "partition" : "replica") +
                                               " outside 0 to " + std::to_string(count - 1) + ".");
      }
      auto global = [&](int64_t id) {
        return partitions ? outer * partitions_ + id : id * partitions_ + outer;
      };
      pairs.emplace_back(LogicalOf(global(s)), LogicalOf(global(t)));
    }
  }
  return pairs;
}

std::string DeviceMap::DescribeGroup(const std::vector<int>& group) const {
  if (group.size() < 2) return "one device";
  // The mesh axes along which the group's members differ.
  const std::vector<int> first = mesh_.CoordsOf(group[0]);
  std::vector<bool> varies(first.size(), false);
  for (int device : group) {
    const std::vector<int> c = mesh_.CoordsOf(device);
    for (size_t a = 0; a < c.size(); ++a)
      varies[a] = varies[a] || c[a] != first[a];
  }
  std::string axes;
  int count = 0;
  int64_t span = 1;
  for (size_t a = 0; a < varies.size(); ++a) {
    if (!varies[a]) continue;
    base::AppendListItem(axes, ", ", mesh_.axis_names()[a]);
    span *= mesh_.shape()[a];
    ++count;
  }
  // Whole axes only when the group has every device of the axes it spans.
  if (span != static_cast<int64_t>(group.size())) return "part of axes (" + axes + ")";
  return count == 1 ? "axis " + axes : "axes (" + axes + ")";
}

std::string DeviceMap::DescribePair(int source, int target) const {
  if (source == target) return "itself";
  const std::vector<int> a = mesh_.CoordsOf(source), b = mesh_.CoordsOf(target);
  std::string axes;
  int hops = 0;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] == b[d]) continue;
    const int n = mesh_.shape()[d];
    const int straight = std::abs(a[d] - b[d]);
    const bool wraps = mesh_.topology().mesh().wraparound(static_cast<int>(d));
    hops += wraps ? std::min(straight, n - straight) : straight;
    base::AppendListItem(axes, " and ", mesh_.axis_names()[d]);
  }
  return axes + ", " + std::to_string(hops) + (hops == 1 ? " hop" : " hops");
}

std::vector<int> ParseDeviceOrder(const std::string& text) {
  std::vector<int> order;
  if (text.empty()) return order;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) {
      throw kernels::ParamError({"device_order"},
                                "device_order '" + text + "': '" + item +
                                    "' is not a device number; give a comma-separated list "
                                    "such as 0,2,1,3.");
    }
    order.push_back(value);
  }
  return order;
}

}  // namespace tpusim::hlo::run
