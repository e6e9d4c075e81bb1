#include "topologies/generations.h"

#include <map>

#include "base/text.h"
#include "topologies/topology_loader.h"
#include "topologies/twist.h"

namespace tpusim::topologies {

// Each generation's file (topologies/<prefix>.textproto) by prefix; generated at build time.
const std::map<std::string, std::string>& EmbeddedGenerations();

namespace {

const char kNonphysicalFix[] = ", or set allow_nonphysical: true to study a hypothetical machine.";

std::vector<uint32_t> ParseShape(const std::string& shape) {
  std::vector<uint32_t> dims;
  size_t at = 0;
  while (at <= shape.size()) {
    const size_t x = std::min(shape.find('x', at), shape.size());
    dims.push_back(static_cast<uint32_t>(std::stoul(shape.substr(at, x - at))));
    at = x + 1;
  }
  return dims;
}

uint64_t Chips(const std::vector<uint32_t>& shape) {
  uint64_t chips = 1;
  for (uint32_t d : shape)
    chips *= d;
  return chips;
}

std::string Joined(const std::vector<uint32_t>& shape, const char* separator) {
  std::string s;
  for (uint32_t d : shape) {
    if (!s.empty()) s += separator;
    s += std::to_string(d);
  }
  return s;
}

// What a preset's description adds after its chip count.
std::string PresetNote(const GenerationRules& rules, const std::string& shape) {
  if (rules.generation == config::V5P && shape == "16x16x24") return ", the largest slice";
  if (rules.generation == config::V5P && shape == "16x20x28") return ", the full pod";
  if (rules.generation == config::TPU7X && shape == "16x24x24")
    return ", the full pod (the pod's 3-D shape is not published: ours)";
  return "";
}

// The suffix of a twisted preset's name: "v5p-4x4x8-twisted".
const char kTwistedSuffix[] = "-twisted";

// The preset's text: the generation's file with a name, a description and the mesh, so that
// `tpusim topologies --text` prints a file a user can copy and edit.
std::string ComposePreset(const GenerationRules& rules, const std::string& shape,
                          const std::string& file, bool twisted = false) {
  const std::vector<uint32_t> dims = ParseShape(shape);
  std::string wrap;
  for (int a = 0; a < static_cast<int>(dims.size()); ++a) {
    if (a) wrap += ", ";
    wrap += WrapAllowed(rules, dims, a) ? "true" : "false";
  }
  std::string head = "name: \"" + rules.prefix + "-" + shape + (twisted ? kTwistedSuffix : "") +
                     "\"\ndescription: \"" + rules.chip;
  head += " slice, " + shape + " = " + std::to_string(Chips(dims)) + " chips";
  if (rules.chiplets > 1) {
    head += " = ";
    head += std::to_string(Chips(dims) * rules.chiplets);
    head += " devices";
  }
  head += (twisted ? ", twisted torus" : PresetNote(rules, shape)) + "\"\n";
  // After the file's leading comment lines (the proto-file header), so editors still find it.
  size_t at = 0;
  while (at < file.size() && (file[at] == '#' || file[at] == '\n'))
    at = file.find('\n', at) + 1;
  std::string text = file.substr(0, at) + head + "\n" + file.substr(at);
  text += "mesh {\n  shape: [" + Joined(dims, ", ") + "]\n  # " + WrapRuleText(rules) +
          "\n  wraparound: [" + wrap + "]\n";
  if (twisted) {
    text +=
        "  # each K-axis's wraparound lands K chips on along every 2K-axis (docs/model.md, "
        "\"Twisted tori\"; docs/references.md §2)\n  twisted: true\n";
  }
  text += "}\n";
  return text;
}

// The generation and shape `name` ("v5p-4x4x8-twisted") presets, or no rules when it names
// none. Found from the names alone: a run on a topology file asks whether its path is a preset
// name, and composing every preset's text to answer was 2% of a 16-chip run's instructions.
struct PresetName {
  const GenerationRules* rules = nullptr;
  std::string shape;
  bool twisted = false;
};

PresetName FindPreset(const std::string& name) {
  for (const GenerationRules& rules : Generations()) {
    if (name.size() <= rules.prefix.size() || name.compare(0, rules.prefix.size(), rules.prefix))
      continue;
    if (name[rules.prefix.size()] != '-') continue;
    std::string shape = name.substr(rules.prefix.size() + 1);
    for (const std::string& known : rules.shapes)
      if (shape == known) return {&rules, shape, false};
    const size_t suffix = sizeof(kTwistedSuffix) - 1;
    if (shape.size() <= suffix || shape.compare(shape.size() - suffix, suffix, kTwistedSuffix))
      continue;
    shape.resize(shape.size() - suffix);
    for (const std::string& known : TwistedShapes(rules.generation))
      if (shape == known) return {&rules, shape, true};
  }
  return {};
}

[[noreturn]] void Fail(const std::string& source, const std::string& field,
                       const std::string& reason) {
  throw TopologyError("topology " + source + ": field '" + field + "' " + reason);
}

}  // namespace

const std::vector<GenerationRules>& Generations() {
  // docs/references.md §2 cites each number: the shapes Google sells [GC], the largest
  // slices and pods [GC][SB], and the wraparound rules [SB tpus].
  static const std::vector<GenerationRules> generations = {
      {config::TPU7X,
       "tpu7x",
       "TPU7x",
       3,
       0,
       9216,
       WrapRule::kWholeCubes,
       {"2x2x1", "2x2x2", "16x24x24"},
       2},
      {config::V4,
       "v4",
       "TPU v4",
       3,
       16,
       4096,
       WrapRule::kWholeCubes,
       {"2x2x1", "2x2x2", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16",
        "16x16x16"}},
      {config::V5E,
       "v5e",
       "TPU v5e",
       2,
       16,
       256,
       WrapRule::kAxisOf16,
       {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}},
      {config::V5P,
       "v5p",
       "TPU v5p",
       3,
       0,
       8960,
       WrapRule::kWholeCubes,
       {"2x2x1", "2x2x2", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16",
        "16x16x24", "16x20x28"}},
      {config::V6E,
       "v6e",
       "TPU v6e",
       2,
       16,
       256,
       WrapRule::kAxisOf16,
       {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}},
  };
  return generations;
}

const GenerationRules* RulesOf(config::Generation generation) {
  for (const GenerationRules& rules : Generations()) {
    if (rules.generation == generation) return &rules;
  }
  return nullptr;
}

bool WrapAllowed(const GenerationRules& rules, const std::vector<uint32_t>& shape, int axis) {
  if (rules.wrap == WrapRule::kAxisOf16) return shape[static_cast<size_t>(axis)] == 16;
  // Whole cubes: three axes, each a multiple of 4 (a shorter mesh has axes of length 1).
  if (shape.size() != 3) return false;
  for (uint32_t d : shape) {
    if (d % 4 != 0) return false;
  }
  return true;
}

std::string WrapRuleText(const GenerationRules& rules) {
  if (rules.wrap == WrapRule::kAxisOf16)
    return "a " + rules.chip + " axis wraps around only when it spans 16 chips " +
           "(docs/references.md §2)";
  return "a " + rules.chip + " slice wraps around only when it is made of whole 4x4x4 cubes, " +
         "three axes each a multiple of 4 chips (docs/references.md §2)";
}

void CheckGenerationRules(const config::Topology& topology, const std::string& source) {
  const GenerationRules* rules = RulesOf(topology.chip().generation());
  if (rules == nullptr || topology.allow_nonphysical()) return;
  const auto& mesh = topology.mesh();
  const std::vector<uint32_t> shape(mesh.shape().begin(), mesh.shape().end());
  const std::string name = Joined(shape, "x");
  if (static_cast<int>(shape.size()) > rules->max_axes) {
    Fail(source, "mesh.shape",
         "has " + std::to_string(shape.size()) + " axes, but " + rules->chip + " is a " +
             std::to_string(rules->max_axes) + "-D torus (docs/references.md §2). Give at most " +
             std::to_string(rules->max_axes) + " axes" + kNonphysicalFix);
  }
  if (Chips(shape) > rules->max_chips) {
    Fail(source, "mesh.shape",
         "is " + name + ", " + std::to_string(Chips(shape)) + " chips, but a " + rules->chip +
             " slice has at most " + std::to_string(rules->max_chips) +
             " (docs/references.md §2). Give a smaller shape" + kNonphysicalFix);
  }
  for (int a = 0; a < static_cast<int>(shape.size()); ++a) {
    const std::string axis = "'" + mesh.axis_names(a) + "'";
    if (rules->max_axis_chips > 0 &&
        shape[static_cast<size_t>(a)] > static_cast<uint32_t>(rules->max_axis_chips)) {
      Fail(source, "mesh.shape",
           "is " + name + ": axis " + axis + " spans " + std::to_string(shape[a]) +
               " chips, but a " + rules->chip + " axis spans at most " +
               std::to_string(rules->max_axis_chips) +
               " (docs/references.md §2). Shorten the axis" + kNonphysicalFix);
    }
    if (!mesh.wraparound(a) || WrapAllowed(*rules, shape, a)) continue;
    std::string why = rules->wrap == WrapRule::kAxisOf16
                          ? "and axis " + axis + " spans " + std::to_string(shape[a])
                          : "and this " + name + " slice is not";
    Fail(source, "mesh.wraparound",
         "wraps axis " + axis + " around, but " + WrapRuleText(*rules) + ", " + why +
             ". Set the axis's flag to false" + kNonphysicalFix);
  }
}

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const GenerationRules& rules : Generations()) {
    for (const std::string& shape : rules.shapes)
      names.push_back(rules.prefix + "-" + shape);
    for (const std::string& shape : TwistedShapes(rules.generation))
      names.push_back(rules.prefix + "-" + shape + kTwistedSuffix);
  }
  return names;
}

std::string PresetText(const std::string& name) {
  const PresetName preset = FindPreset(name);
  if (preset.rules == nullptr) {
    std::string known;
    for (const auto& n : PresetNames())
      base::AppendListItem(known, ", ", n);
    throw TopologyError("unknown topology '" + name + "': it is neither a preset (" + known +
                        ") nor a readable file");
  }
  return ComposePreset(*preset.rules, preset.shape, EmbeddedGenerations().at(preset.rules->prefix),
                       preset.twisted);
}

bool IsPreset(const std::string& name) {
  return FindPreset(name).rules != nullptr;
}

}  // namespace tpusim::topologies
