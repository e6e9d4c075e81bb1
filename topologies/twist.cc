#include "topologies/twist.h"

#include <algorithm>

#include "topologies/generations.h"
#include "topologies/topology_loader.h"

namespace tpusim::topologies {
namespace {

[[noreturn]] void Fail(const std::string& source, const std::string& reason) {
  throw TopologyError("topology " + source + ": field 'mesh.twisted' " + reason);
}

std::string ShapeName(const std::vector<int>& shape) {
  std::string s;
  for (int d : shape) {
    if (!s.empty()) s += 'x';
    s += std::to_string(d);
  }
  return s;
}

}  // namespace

std::vector<std::vector<int>> TwistShifts(const std::vector<int>& shape) {
  if (shape.empty()) return {};
  const int k = *std::min_element(shape.begin(), shape.end());
  const int longest = *std::max_element(shape.begin(), shape.end());
  if (k < 1 || longest != 2 * k) return {};
  for (int d : shape) {
    if (d != k && d != 2 * k) return {};
  }
  const size_t axes = shape.size();
  std::vector<std::vector<int>> shifts(axes, std::vector<int>(axes, 0));
  for (size_t from = 0; from < axes; ++from) {
    if (shape[from] != k) continue;
    for (size_t along = 0; along < axes; ++along) {
      if (shape[along] == 2 * k) shifts[from][along] = k;
    }
  }
  return shifts;
}

const std::vector<std::string>& TwistedShapes(config::Generation generation) {
  // [GC]'s v4 and v5p pages (docs/references.md §2).
  static const std::vector<std::string> sold = {"4x4x8", "4x8x8", "8x8x16", "8x16x16"};
  static const std::vector<std::string> none;
  return generation == config::V4 || generation == config::V5P ? sold : none;
}

void CheckTwist(const config::Topology& topology, const std::string& source) {
  const auto& mesh = topology.mesh();
  if (!mesh.twisted()) return;
  const std::vector<int> shape(mesh.shape().begin(), mesh.shape().end());
  const std::string name = ShapeName(shape);
  if (TwistShifts(shape).empty()) {
    Fail(source, "twists a " + name +
                     " slice, but a twisted torus needs axes of two lengths, K chips and 2K "
                     "(as 4x4x8 or 4x8x8; docs/model.md, \"Twisted tori\"). Give such a shape, "
                     "or set twisted to false.");
  }
  for (int a = 0; a < mesh.shape_size(); ++a) {
    if (mesh.wraparound(a)) continue;
    Fail(source, "twists the wraparound links, but axis '" + mesh.axis_names(a) +
                     "' does not wrap around. Set every axis's wraparound flag to true, or set "
                     "twisted to false.");
  }
  const GenerationRules* rules = RulesOf(topology.chip().generation());
  if (rules == nullptr || topology.allow_nonphysical()) return;
  const char* fix = ", or set allow_nonphysical: true to study a hypothetical machine.";
  const std::vector<std::string>& sold = TwistedShapes(rules->generation);
  if (sold.empty()) {
    Fail(source, "twists a " + rules->chip + " slice, but only TPU v4 and v5p slices come as " +
                     "twisted tori (docs/references.md §2). Set twisted to false" + fix);
  }
  if (std::find(sold.begin(), sold.end(), name) == sold.end()) {
    std::string shapes;
    for (size_t i = 0; i < sold.size(); ++i) {
      if (i) shapes += i + 1 == sold.size() ? " and " : ", ";
      shapes += sold[i];
    }
    Fail(source, "twists a " + name + " " + rules->chip + " slice, but " + rules->chip +
                     " comes twisted only as " + shapes +
                     " (docs/references.md §2). Give one of those shapes, or set twisted to "
                     "false" +
                     fix);
  }
}

}  // namespace tpusim::topologies
