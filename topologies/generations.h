#pragma once

// Each TPU generation's slice rules and presets, one home for both (docs/references.md §2):
// which axes of a slice may wrap around, how many axes and chips a slice may have, and the
// slice shapes that are presets. A preset "v5e-4x4" is the generation's file
// (topologies/v5e.textproto: chip and ICI) with that mesh, wrapped wherever the rule allows.

#include <cstdint>
#include <string>
#include <vector>

#include "topologies/topology.pb.h"

namespace tpusim::topologies {

// How a generation's torus axes may wrap around.
enum class WrapRule {
  kAxisOf16,    // v5e, v6e: an axis wraps only when it spans 16 chips
  kWholeCubes,  // v4, v5p, TPU7x: every axis wraps when the slice is whole 4x4x4 cubes, none else
};

struct GenerationRules {
  config::Generation generation;
  std::string prefix;  // of the presets' names and of the generation's file: "v5e"
  std::string chip;    // for messages: "TPU v5e"
  int max_axes;        // the torus's dimensions
  int max_axis_chips;  // the longest axis; 0 when only max_chips bounds it
  uint64_t max_chips;  // a full pod, or the largest slice where no pod is larger
  WrapRule wrap;
  std::vector<std::string> shapes;  // the presets, by chip count: "4x4"
  uint32_t chiplets = 1;            // devices per chip (config::ChipletConfig): TPU7x's 2
};

// tpu7x, v4, v5e, v5p, v6e: the presets' order.
const std::vector<GenerationRules>& Generations();
// nullptr for GENERATION_UNSPECIFIED: such a chip is not checked.
const GenerationRules* RulesOf(config::Generation generation);

// Whether axis `axis` of a slice of this `shape` may wrap around on real hardware.
bool WrapAllowed(const GenerationRules& rules, const std::vector<uint32_t>& shape, int axis);
// The wraparound rule as a sentence, citing docs/references.md.
std::string WrapRuleText(const GenerationRules& rules);

// Throws TopologyError when a validated topology of a known generation breaks its rules,
// unless it sets allow_nonphysical.
void CheckGenerationRules(const config::Topology& topology, const std::string& source);

}  // namespace tpusim::topologies
