#include "topologies/topology_loader.h"
#include "base/errors.h"
#include "base/param.h"
#include "base/text.h"
#include "topologies/chiplets.h"
#include "topologies/generations.h"
#include "topologies/multislice.h"
#include "topologies/parse_targets.h"
#include "topologies/twist.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

namespace tpusim::topologies {

namespace {

class CollectParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  explicit CollectParseErrors(std::string source) : source_(std::move(source)) {}
  void AddError(int line, int column, const std::string& message) override {
    // The tokenizer counts from 0; editors count from 1.
    errors_ << source_ << ":" << line + 1 << ":" << column + 1 << ": " << message << "\n";
  }
  void AddWarning(int line, int column, const std::string& message) override {
    AddError(line, column, message);
  }
  std::string str() const { return errors_.str(); }

 private:
  std::string source_;
  std::ostringstream errors_;
};

[[noreturn]] void Fail(const std::string& source, const std::string& field,
                       const std::string& reason) {
  throw TopologyError("topology " + source + ": field '" + field + "' " + reason);
}

// A field's range from FieldRanges(), by the declaration's name.
const base::Param& Ranged(const std::string& name) {
  for (const auto& range : FieldRanges()) {
    if (range.name() == name) return range;
  }
  throw TopologyError("the topology loader checks a field against range '" + name +
                      "', which FieldRanges() does not declare");
}

template <typename T>
void RequireInRange(const std::string& source, const std::string& field, bool present, T value,
                    const base::Param& range) {
  if (!present) Fail(source, field, "is missing; give it in " + range.unit());
  const double v = static_cast<double>(value);
  const double min = range.min()->Number().value_or(0);
  const double max = range.max()->Number().value_or(0);
  if (v >= min && v <= max) return;  // false for NaN
  std::string shown;
  if constexpr (std::is_integral_v<T>) {
    shown = std::to_string(value);
  } else {
    shown = base::NumberText(value);
  }
  Fail(source, field,
       "is " + shown + ", outside its range: it must be at least " + base::NumberText(min) +
           " and at most " + base::NumberText(max) + " (" + range.unit() + "; " +
           range.description() + "); see topologies/topology.proto");
}

// A model's name and parameters are checked against the model when the slice is built
// (sim/memory_models.h, sim/compute_models.h); here, only that they are well formed.
template <typename Config>
void ValidateModelChoice(const std::string& source, const std::string& field, const Config& config,
                         const char* example) {
  if (config.has_model() && config.model().empty())
    Fail(source, field + ".model", std::string("is empty; name a timing model, e.g. ") + example);
  std::set<std::string> names;
  for (int i = 0; i < config.parameter_size(); ++i) {
    const auto& p = config.parameter(i);
    const std::string at = field + ".parameter[" + std::to_string(i) + "]";
    if (p.name().empty()) Fail(source, at + ".name", "is missing; name the model parameter");
    if (!names.insert(p.name()).second)
      Fail(source, at + ".name", "gives '" + p.name() + "' twice; give each parameter once");
    if (!p.has_value() || !std::isfinite(p.value()))
      Fail(source, at + ".value", "must be a finite number for parameter '" + p.name() + "'");
  }
}

void ValidateMemoryModel(const std::string& source, const std::string& field,
                         const config::MemoryConfig& memory) {
  ValidateModelChoice(source, field, memory, "\"bandwidth\"");
}

void ValidateMemory(const std::string& source, const std::string& name, bool present,
                    const config::MemoryConfig& memory) {
  if (!present) Fail(source, "chip." + name, "is missing; give capacity_bytes and bandwidth");
  RequireInRange(source, "chip." + name + ".capacity_bytes", memory.has_capacity_bytes(),
                 memory.capacity_bytes(), Ranged("capacity"));
  RequireInRange(source, "chip." + name + ".bandwidth_bytes_per_s",
                 memory.has_bandwidth_bytes_per_s(), memory.bandwidth_bytes_per_s(),
                 Ranged("bandwidth"));
  ValidateMemoryModel(source, "chip." + name, memory);
}

// Coordinates given in an override: one per axis, each inside the mesh.
std::vector<int> OverrideCoords(const std::string& source, const std::string& field,
                                const google::protobuf::RepeatedField<uint32_t>& chip,
                                const config::MeshConfig& mesh) {
  if (chip.size() != mesh.shape_size()) {
    Fail(source, field,
         "has " + std::to_string(chip.size()) + " coordinates, but the mesh has " +
             std::to_string(mesh.shape_size()) + " axes; give one per axis, e.g. chip: [3, 1]");
  }
  std::vector<int> coords;
  for (int i = 0; i < chip.size(); ++i) {
    if (chip.Get(i) >= mesh.shape(i)) {
      Fail(source, field,
           "has coordinate " + std::to_string(chip.Get(i)) + " on axis '" + mesh.axis_names(i) +
               "', which has " + std::to_string(mesh.shape(i)) + " chips (0 to " +
               std::to_string(mesh.shape(i) - 1) + ")");
    }
    coords.push_back(static_cast<int>(chip.Get(i)));
  }
  return coords;
}

std::string CoordsString(const std::vector<int>& coords) {
  std::string s = "(";
  for (size_t i = 0; i < coords.size(); ++i)
    s += (i ? ", " : "") + std::to_string(coords[i]);
  return s + ")";
}

}  // namespace

int LinkAxis(const config::MeshConfig& mesh, const std::string& direction) {
  if (direction.size() < 2 || (direction.back() != '+' && direction.back() != '-')) return -1;
  for (int a = 0; a < mesh.axis_names_size(); ++a) {
    if (mesh.axis_names(a) == direction.substr(0, direction.size() - 1)) return a;
  }
  return -1;
}

std::string DirectionHint(const config::MeshConfig& mesh) {
  std::string names;
  for (const auto& n : mesh.axis_names())
    names += (names.empty() ? "'" : "', '") + n + "+";
  return "give a mesh axis and + or -, e.g. " + names + "'";
}

std::string MissingLink(const config::MeshConfig& mesh, const std::vector<int>& coords,
                        const std::string& direction) {
  const int axis = LinkAxis(mesh, direction);
  const bool forward = direction.back() == '+';
  const bool at_edge =
      forward ? coords[axis] == static_cast<int>(mesh.shape(axis)) - 1 : coords[axis] == 0;
  if (mesh.shape(axis) < 2) return "axis '" + mesh.axis_names(axis) + "' has one chip";
  if (at_edge && !mesh.wraparound(axis))
    return "axis '" + mesh.axis_names(axis) + "' has no wraparound and the chip is at its edge";
  return "";
}

namespace {

void ValidateOverrides(const std::string& source, const config::Topology& topology) {
  const auto& mesh = topology.mesh();
  std::set<std::pair<std::vector<int>, std::string>> links;
  for (int i = 0; i < topology.link_override_size(); ++i) {
    const auto& o = topology.link_override(i);
    const std::string at = "link_override[" + std::to_string(i) + "]";
    const std::vector<int> coords = OverrideCoords(source, at + ".chip", o.chip(), mesh);
    const std::string& direction = o.direction();
    if (LinkAxis(mesh, direction) < 0)
      Fail(source, at + ".direction", "is '" + direction + "'; " + DirectionHint(mesh));
    if (const std::string missing = MissingLink(mesh, coords, direction); !missing.empty()) {
      Fail(source, at,
           "names the " + direction + " link of chip " + CoordsString(coords) +
               ", which does not exist: " + missing);
    }
    if (!links.insert({coords, direction}).second)
      Fail(source, at,
           "overrides the " + direction + " link of chip " + CoordsString(coords) +
               " a second time; merge the two");
    if (!o.has_bandwidth_bytes_per_s() && !o.has_latency_ns())
      Fail(source, at, "changes nothing; give bandwidth_bytes_per_s, latency_ns or both");
    if (o.has_bandwidth_bytes_per_s())
      RequireInRange(source, at + ".bandwidth_bytes_per_s", true, o.bandwidth_bytes_per_s(),
                     Ranged("bandwidth"));
    if (o.has_latency_ns())
      RequireInRange(source, at + ".latency_ns", true, o.latency_ns(), Ranged("hop_latency"));
  }
  std::set<std::vector<int>> chips;
  for (int i = 0; i < topology.chip_override_size(); ++i) {
    const auto& o = topology.chip_override(i);
    const std::string at = "chip_override[" + std::to_string(i) + "]";
    const std::vector<int> coords = OverrideCoords(source, at + ".chip", o.chip(), mesh);
    if (!chips.insert(coords).second)
      Fail(source, at, "overrides chip " + CoordsString(coords) + " a second time; merge the two");
    auto memory = [&](const char* name, bool present, const config::MemoryConfig& m) {
      if (!present) return;
      const std::string field = at + "." + name;
      if (m.has_capacity_bytes())
        RequireInRange(source, field + ".capacity_bytes", true, m.capacity_bytes(),
                       Ranged("capacity"));
      if (m.has_bandwidth_bytes_per_s())
        RequireInRange(source, field + ".bandwidth_bytes_per_s", true, m.bandwidth_bytes_per_s(),
                       Ranged("bandwidth"));
      ValidateMemoryModel(source, field, m);
    };
    memory("hbm", o.has_hbm(), o.hbm());
    memory("vmem", o.has_vmem(), o.vmem());
    memory("smem", o.has_smem(), o.smem());
    if (o.has_dma() && o.dma().has_engines())
      RequireInRange(source, at + ".dma.engines", true, o.dma().engines(), Ranged("dma_engines"));
    if (o.has_dma() && o.dma().has_chunk_bytes())
      RequireInRange(source, at + ".dma.chunk_bytes", true, o.dma().chunk_bytes(),
                     Ranged("chunk_bytes"));
    if (o.has_dma() && o.dma().has_issue_latency_ns())
      RequireInRange(source, at + ".dma.issue_latency_ns", true, o.dma().issue_latency_ns(),
                     Ranged("latency"));
    if (!o.has_hbm() && !o.has_vmem() && !o.has_smem() && !o.has_dma())
      Fail(source, at, "changes nothing; give hbm, vmem, smem or dma fields");
  }
}

// chip.cost may be left out (an ideal chip), but what it gives must make sense.
void ValidateCost(const std::string& source, const config::ComputeCostConfig& cost) {
  RequireInRange(source, "chip.cost.op_launch_ns", true, cost.op_launch_ns(), Ranged("latency"));
  RequireInRange(source, "chip.cost.xla_mxu_efficiency", true, cost.xla_mxu_efficiency(),
                 Ranged("xla_efficiency"));
  RequireInRange(source, "chip.cost.xla_hbm_efficiency", true, cost.xla_hbm_efficiency(),
                 Ranged("xla_efficiency"));
  RequireInRange(source, "chip.cost.xla_pipeline_step_bytes", true, cost.xla_pipeline_step_bytes(),
                 Ranged("step_bytes"));
  ValidateModelChoice(source, "chip.cost", cost, "\"roofline\"");
  RequireInRange(source, "chip.cost.grid_step_cycles", true, cost.grid_step_cycles(),
                 Ranged("grid_step_cycles"));
  RequireInRange(source, "chip.cost.mxu_efficiency", true, cost.mxu_efficiency(),
                 Ranged("mxu_efficiency"));
  RequireInRange(source, "chip.cost.int8_mxu_rate", true, cost.int8_mxu_rate(),
                 Ranged("int8_mxu_rate"));
  RequireInRange(source, "chip.cost.int32_dot_passes", true, cost.int32_dot_passes(),
                 Ranged("int32_dot_passes"));
}

}  // namespace

void FailField(const std::string& source, const std::string& field, const std::string& reason) {
  Fail(source, field, reason);
}

void RequireFieldInRange(const std::string& source, const std::string& field, bool present,
                         double value, const std::string& range) {
  RequireInRange(source, field, present, value, Ranged(range));
}

void RequireFieldInRange(const std::string& source, const std::string& field, bool present,
                         uint64_t value, const std::string& range) {
  RequireInRange(source, field, present, value, Ranged(range));
}

void ValidateTopology(config::Topology& topology, const std::string& source) {
  if (!topology.has_chip())
    Fail(source, "chip", "is missing; every slice needs a chip description");
  auto& chip = *topology.mutable_chip();
  RequireInRange(source, "chip.clock_hz", chip.has_clock_hz(), chip.clock_hz(), Ranged("clock"));
  RequireInRange(source, "chip.tensor_cores", true, chip.tensor_cores(), Ranged("tensor_cores"));
  ValidateMemory(source, "hbm", chip.has_hbm(), chip.hbm());
  ValidateMemory(source, "vmem", chip.has_vmem(), chip.vmem());
  ValidateMemory(source, "smem", chip.has_smem(), chip.smem());
  RequireInRange(source, "chip.mxu_count", chip.has_mxu_count(), chip.mxu_count(),
                 Ranged("mxu_count"));
  RequireInRange(source, "chip.mxu_size", chip.has_mxu_size(), chip.mxu_size(), Ranged("mxu_size"));
  RequireInRange(source, "chip.vpu_sublanes", true, chip.vpu_sublanes(), Ranged("vpu_shape"));
  RequireInRange(source, "chip.vpu_lanes", true, chip.vpu_lanes(), Ranged("vpu_shape"));
  ValidateCost(source, chip.cost());
  if (!chip.has_dma()) Fail(source, "chip.dma", "is missing; give the number of DMA engines");
  RequireInRange(source, "chip.dma.engines", chip.dma().has_engines(), chip.dma().engines(),
                 Ranged("dma_engines"));
  RequireInRange(source, "chip.dma.chunk_bytes", true, chip.dma().chunk_bytes(),
                 Ranged("chunk_bytes"));
  RequireInRange(source, "chip.dma.issue_latency_ns", true, chip.dma().issue_latency_ns(),
                 Ranged("latency"));

  if (!topology.has_ici()) Fail(source, "ici", "is missing; give the link bandwidth and latency");
  RequireInRange(source, "ici.link_bandwidth_bytes_per_s",
                 topology.ici().has_link_bandwidth_bytes_per_s(),
                 topology.ici().link_bandwidth_bytes_per_s(), Ranged("bandwidth"));
  RequireInRange(source, "ici.hop_latency_ns", topology.ici().has_hop_latency_ns(),
                 topology.ici().hop_latency_ns(), Ranged("hop_latency"));
  RequireInRange(source, "ici.signal_latency_ns", true, topology.ici().signal_latency_ns(),
                 Ranged("latency"));

  if (!topology.has_mesh()) Fail(source, "mesh", "is missing; give its shape, e.g. shape: [4, 4]");
  if (topology.has_chiplets()) RemoveChipletAxis(source, topology);
  if (topology.has_multislice()) RemoveSliceAxis(source, topology);
  auto& mesh = *topology.mutable_mesh();
  const int dims = mesh.shape_size();
  if (dims < 1 || dims > 3)
    Fail(source, "mesh.shape",
         "has " + std::to_string(dims) + " axes, but a torus has 1, 2 or 3 axes");
  uint64_t chips = 1;  // at most kMaxChips^3 while the axes are checked: no overflow
  for (int i = 0; i < dims; ++i) {
    RequireInRange(source, "mesh.shape[" + std::to_string(i) + "]", true, mesh.shape(i),
                   Ranged("axis_length"));
    chips *= mesh.shape(i);
  }
  RequireInRange(source, "mesh.shape (the chip count, the product of the axes)", true, chips,
                 Ranged("chip_count"));
  if (mesh.axis_names_size() == 0) {
    static const char* kDefaultNames[] = {"x", "y", "z"};
    for (int i = 0; i < dims; ++i)
      mesh.add_axis_names(kDefaultNames[i]);
  } else if (mesh.axis_names_size() != dims) {
    Fail(source, "mesh.axis_names",
         "names " + std::to_string(mesh.axis_names_size()) + " axes, but mesh.shape has " +
             std::to_string(dims) + "; give one name per axis or none for x, y, z");
  }
  std::set<std::string> seen;
  for (const auto& name : mesh.axis_names()) {
    if (name.empty()) Fail(source, "mesh.axis_names", "has an empty name");
    if (!seen.insert(name).second)
      Fail(source, "mesh.axis_names", "names axis '" + name + "' twice; names must be unique");
  }
  if (mesh.wraparound_size() == 0) {
    for (int i = 0; i < dims; ++i)
      mesh.add_wraparound(false);
  } else if (mesh.wraparound_size() != dims) {
    Fail(source, "mesh.wraparound",
         "has " + std::to_string(mesh.wraparound_size()) + " flags, but mesh.shape has " +
             std::to_string(dims) + " axes; give one per axis");
  }
  ValidateOverrides(source, topology);
  CheckGenerationRules(topology, source);
  CheckTwist(topology, source);
  if (topology.has_dcn()) ValidateDcn(source, topology.dcn());
  if (topology.has_multislice()) AddSliceAxis(source, topology);
  if (topology.has_chiplets()) AddChipletAxis(source, topology);
  if (!topology.has_name()) topology.set_name(std::filesystem::path(source).stem().string());
}

config::Topology ParseTopology(const std::string& text, const std::string& source) {
  config::Topology topology;
  MakeParseTargets(topology);
  google::protobuf::TextFormat::Parser parser;
  CollectParseErrors errors(source);
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &topology)) {
    throw TopologyError("topology " + source + " is not a valid tpusim.config.Topology:\n" +
                        errors.str() + "See topologies/topology.proto for the fields.");
  }
  ValidateTopology(topology, source);
  return topology;
}

config::Topology LoadTopology(const std::string& name_or_path) {
  if (IsPreset(name_or_path)) {
    return ParseTopology(PresetText(name_or_path), "preset " + name_or_path);
  }
  std::error_code error;
  const auto status = std::filesystem::status(name_or_path, error);
  if (error || !std::filesystem::exists(status))
    PresetText(name_or_path);  // throws, listing presets
  if (std::filesystem::is_directory(status)) {
    throw TopologyError("topology " + name_or_path +
                        " is a directory; give a preset name or the path of a .textproto file.");
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw TopologyError("topology " + name_or_path +
                        " is not a regular file (a device, pipe or socket); give a preset name "
                        "or the path of a .textproto file.");
  }
  std::ifstream file(name_or_path, std::ios::binary);
  if (!file) {
    throw TopologyError("topology " + name_or_path +
                        " cannot be opened for reading; check its permissions.");
  }
  // Read in pieces and bounded, so a huge or growing file cannot exhaust memory, and a
  // small one costs no more than its size (a zeroed buffer of the bound was a third of a
  // small run's start-up).
  std::string text;
  std::array<char, 1 << 14> piece;
  while (file.read(piece.data(), piece.size()) || file.gcount() > 0) {
    text.append(piece.data(), static_cast<size_t>(file.gcount()));
    if (text.size() > kMaxTopologyFileBytes) {
      throw TopologyError("topology " + name_or_path + " is larger than " +
                          std::to_string(kMaxTopologyFileBytes) +
                          " bytes, the most a slice description needs; is it the right file?");
    }
  }
  return ParseTopology(text, name_or_path);
}

uint64_t DeviceCount(const config::Topology& topology) {
  uint64_t count = 1;
  for (auto d : topology.mesh().shape())
    count *= d;
  return count;
}

base::DeviceGrid DeviceGridOf(const config::Topology& topology) {
  // The loader bounds the chip count; a topology built in code may not have been loaded.
  uint64_t devices = 1;
  std::vector<int> shape;
  for (auto n : topology.mesh().shape()) {
    devices *= n;
    if (n == 0 || devices > kMaxDevices) {
      throw Error(ErrorKind::kInvalidArgument,
                  "mesh shape " + ShapeString(topology) + " has " +
                      (n == 0 ? "an axis of length 0"
                              : "more than the " + std::to_string(kMaxDevices) +
                                    " devices a slice may have") +
                      "; validate the topology with ValidateTopology.");
    }
    shape.push_back(static_cast<int>(n));
  }
  if (topology.mesh().axis_names_size() != static_cast<int>(shape.size())) {
    throw Error(ErrorKind::kInvalidArgument,
                "mesh shape " + ShapeString(topology) + " has " + std::to_string(shape.size()) +
                    " axes but " + std::to_string(topology.mesh().axis_names_size()) +
                    " axis names; validate the topology with ValidateTopology.");
  }
  return base::DeviceGrid(std::move(shape),
                          std::vector<std::string>(topology.mesh().axis_names().begin(),
                                                   topology.mesh().axis_names().end()));
}

uint64_t ChipCount(const config::Topology& topology) {
  const auto& mesh = topology.mesh();
  const bool chiplet_axis =
      topology.has_chiplets() && mesh.axis_names_size() > 0 &&
      mesh.axis_names(mesh.axis_names_size() - 1) == topology.chiplets().axis_name() &&
      topology.chiplets().count() > 0;
  return DeviceCount(topology) / (chiplet_axis ? topology.chiplets().count() : 1);
}

namespace {
bool SameCoords(const google::protobuf::RepeatedField<uint32_t>& chip,
                const std::vector<int>& coords) {
  if (chip.size() != static_cast<int>(coords.size())) return false;
  for (int i = 0; i < chip.size(); ++i) {
    if (static_cast<int>(chip.Get(i)) != coords[static_cast<size_t>(i)]) return false;
  }
  return true;
}

// A memory field of an override replaces the slice's; a new model brings its own parameters.
void Override(config::MemoryConfig& memory, const config::MemoryConfig& with) {
  if (with.has_model() || with.parameter_size() > 0) memory.clear_parameter();
  memory.MergeFrom(with);
}
}  // namespace

config::ChipConfig ChipAt(const config::Topology& topology, const std::vector<int>& mesh_coords) {
  const std::vector<int> coords = InSlice(topology, OfChip(topology, mesh_coords));
  config::ChipConfig chip = topology.chip();
  for (const auto& o : topology.chip_override()) {
    if (!SameCoords(o.chip(), coords)) continue;
    if (o.has_hbm()) Override(*chip.mutable_hbm(), o.hbm());
    if (o.has_vmem()) Override(*chip.mutable_vmem(), o.vmem());
    if (o.has_smem()) Override(*chip.mutable_smem(), o.smem());
    if (o.has_dma()) chip.mutable_dma()->MergeFrom(o.dma());
  }
  return chip;
}

LinkSettings LinkAt(const config::Topology& topology, const std::vector<int>& mesh_coords,
                    const std::string& direction) {
  if (IsD2dDirection(topology, direction))
    return {topology.chiplets().d2d_bandwidth_bytes_per_s(), topology.chiplets().d2d_latency_ns()};
  const std::vector<int> coords = InSlice(topology, OfChip(topology, mesh_coords));
  LinkSettings link{topology.ici().link_bandwidth_bytes_per_s(), topology.ici().hop_latency_ns()};
  for (const auto& o : topology.link_override()) {
    if (o.direction() != direction || !SameCoords(o.chip(), coords)) continue;
    if (o.has_bandwidth_bytes_per_s()) link.bandwidth_bytes_per_s = o.bandwidth_bytes_per_s();
    if (o.has_latency_ns()) link.latency_ns = o.latency_ns();
  }
  return link;
}

std::string ShapeString(const config::Topology& topology) {
  std::string s;
  // Appending piecewise: `"x" + std::to_string(d)` trips GCC 12's -Wrestrict false positive.
  for (auto d : topology.mesh().shape()) {
    if (!s.empty()) s += 'x';
    s += std::to_string(d);
  }
  return s;
}

}  // namespace tpusim::topologies
