#pragma once

// The device mesh of a slice (from its topology) and how arrays are laid out on it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/device_grid.h"
#include "dsl/array.h"
#include "topologies/topology.pb.h"

namespace tpusim::dsl {

class Mesh {
 public:
  explicit Mesh(config::Topology topology);

  const config::Topology& topology() const { return topology_; }
  const base::DeviceGrid& grid() const { return grid_; }
  const std::vector<std::string>& axis_names() const { return grid_.axis_names(); }
  const std::vector<int>& shape() const { return grid_.shape(); }
  int devices() const { return static_cast<int>(grid_.chips()); }
  // Throws Error(kInvalidArgument) naming the mesh's axes when `axis` is not one.
  int AxisIndex(const std::string& axis) const;
  int AxisSize(const std::string& axis) const { return shape()[AxisIndex(axis)]; }
  // Row-major device numbering, as JAX numbers mesh devices (base::DeviceGrid).
  std::vector<int> CoordsOf(int device) const {
    return grid_.CoordsOf(static_cast<base::ChipId>(device));
  }
  int DeviceAt(const std::vector<int>& coords) const {
    return static_cast<int>(grid_.ChipAt(coords));
  }
  std::string Describe() const;  // "Mesh('x': 4, 'y': 4)"

 private:
  config::Topology topology_;
  base::DeviceGrid grid_;
};

// Per array dimension, the mesh axes it is split over (none: replicated along it).
// P{"x", nullptr} splits dimension 0 over x and keeps dimension 1 whole.
class PartitionSpec {
 public:
  struct Entry {
    std::vector<std::string> axes;
    Entry(std::nullptr_t) {}                                   // NOLINT: like None in JAX
    Entry(const char* axis) : axes{axis} {}                    // NOLINT
    Entry(std::string axis) : axes{std::move(axis)} {}         // NOLINT
    Entry(std::vector<std::string> a) : axes(std::move(a)) {}  // NOLINT: a tuple of axes
  };
  PartitionSpec() = default;
  PartitionSpec(std::initializer_list<Entry> entries) : entries_(entries) {}
  explicit PartitionSpec(std::vector<Entry> entries) : entries_(std::move(entries)) {}

  const std::vector<Entry>& entries() const { return entries_; }
  std::string Describe() const;  // "P('x', None)"

  // The per-device block shape of an array of `global` shape; throws Error naming the
  // operand when a dimension does not split evenly.
  Shape BlockShape(const Mesh& mesh, const Shape& global, const std::string& operand) const;
  // The global shape whose per-device block is `block`: BlockShape's inverse.
  Shape GlobalShape(const Mesh& mesh, const Shape& block) const;
  // Where `device`'s block starts in the global array.
  Shape BlockOffsets(const Mesh& mesh, const Shape& global, int device) const;
  // The mesh axes the spec does not mention: the array is the same along them.
  std::vector<std::string> ReplicatedAxes(const Mesh& mesh) const;
  // The device whose copy of `device`'s block assembling the global array uses (index 0
  // on every replicated axis), and whether that is `device` itself.
  int CanonicalReplica(const Mesh& mesh, int device) const;
  bool IsCanonicalReplica(const Mesh& mesh, int device) const;

 private:
  std::vector<Entry> entries_;
};
using P = PartitionSpec;

}  // namespace tpusim::dsl
