#include "dsl/mesh.h"

#include <set>

#include "base/errors.h"
#include "topologies/topology_loader.h"

namespace tpusim::dsl {

Mesh::Mesh(config::Topology topology)
    : topology_(std::move(topology)), grid_(topologies::DeviceGridOf(topology_)) {}

int Mesh::AxisIndex(const std::string& axis) const {
  if (const int index = grid_.AxisIndex(axis); index >= 0) return index;
  throw Error(
      ErrorKind::kInvalidArgument, "mesh axis '" + axis + "' does not exist; " + Describe() +
                                       " has axes " +
                                       [&] {
                                         std::string s;
                                         for (const auto& n : axis_names())
                                           s += (s.empty() ? "'" : ", '") + n + "'";
                                         return s;
                                       }() +
                                       ".");
}

std::string Mesh::Describe() const {
  std::string s = "Mesh(";
  for (size_t i = 0; i < shape().size(); ++i)
    s += (i ? ", '" : "'") + axis_names()[i] + "': " + std::to_string(shape()[i]);
  return s + ")";
}

std::string PartitionSpec::Describe() const {
  std::string s = "P(";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) s += ", ";
    const auto& axes = entries_[i].axes;
    if (axes.empty()) {
      s += "None";
    } else if (axes.size() == 1) {
      s += "'" + axes[0] + "'";
    } else {
      s += "(";
      for (size_t j = 0; j < axes.size(); ++j)
        s += (j ? ", '" : "'") + axes[j] + "'";
      s += ")";
    }
  }
  return s + ")";
}

Shape PartitionSpec::BlockShape(const Mesh& mesh, const Shape& global,
                                const std::string& operand) const {
  if (entries_.size() > global.size()) {
    throw Error(ErrorKind::kInvalidArgument, operand + " has " + std::to_string(global.size()) +
                                                 " dimensions, but its spec " + Describe() +
                                                 " names " + std::to_string(entries_.size()) + ".");
  }
  std::set<std::string> used;
  Shape block = global;
  for (size_t d = 0; d < entries_.size(); ++d) {
    int64_t split = 1;
    for (const auto& axis : entries_[d].axes) {
      if (!used.insert(axis).second) {
        throw Error(ErrorKind::kInvalidArgument, operand + "'s spec " + Describe() +
                                                     " uses mesh axis '" + axis +
                                                     "' twice; each axis may split one dimension.");
      }
      split *= mesh.AxisSize(axis);
    }
    if (global[d] % split != 0) {
      throw Error(ErrorKind::kInvalidArgument,
                  operand + " has shape " + ShapeString(global) + ", but dimension " +
                      std::to_string(d) + " (" + std::to_string(global[d]) + ") is split " +
                      std::to_string(split) + " ways by " + Describe() +
                      " and does not divide evenly; make it a multiple of " +
                      std::to_string(split) + ".");
    }
    block[d] = global[d] / split;
  }
  return block;
}

Shape PartitionSpec::GlobalShape(const Mesh& mesh, const Shape& block) const {
  Shape global = block;
  for (size_t d = 0; d < entries_.size() && d < global.size(); ++d) {
    for (const auto& axis : entries_[d].axes)
      global[d] *= mesh.AxisSize(axis);
  }
  return global;
}

Shape PartitionSpec::BlockOffsets(const Mesh& mesh, const Shape& global, int device) const {
  if (entries_.size() > global.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                "PartitionSpec " + Describe() + " names " + std::to_string(entries_.size()) +
                    " dimensions, but the array has shape " + ShapeString(global) +
                    "; give at most one entry per dimension.");
  }
  const auto coords = mesh.CoordsOf(device);
  Shape offsets(global.size(), 0);
  for (size_t d = 0; d < entries_.size(); ++d) {
    int64_t index = 0, split = 1;
    for (const auto& axis : entries_[d].axes) {
      const int a = mesh.AxisIndex(axis);
      index = index * mesh.shape()[a] + coords[a];
      split *= mesh.shape()[a];
    }
    offsets[d] = index * (global[d] / split);
  }
  return offsets;
}

std::vector<std::string> PartitionSpec::ReplicatedAxes(const Mesh& mesh) const {
  std::set<std::string> used;
  for (const auto& e : entries_)
    used.insert(e.axes.begin(), e.axes.end());
  std::vector<std::string> replicated;
  for (const auto& axis : mesh.axis_names()) {
    if (!used.count(axis)) replicated.push_back(axis);
  }
  return replicated;
}

int PartitionSpec::CanonicalReplica(const Mesh& mesh, int device) const {
  auto coords = mesh.CoordsOf(device);
  for (const auto& axis : ReplicatedAxes(mesh))
    coords[mesh.AxisIndex(axis)] = 0;
  return mesh.DeviceAt(coords);
}

bool PartitionSpec::IsCanonicalReplica(const Mesh& mesh, int device) const {
  return CanonicalReplica(mesh, device) == device;
}

}  // namespace tpusim::dsl
