#include "topologies/topology_loader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tpusim::topologies {

const std::map<std::string, std::string>& EmbeddedPresets();  // generated at build time

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

void RequirePositive(const std::string& source, const std::string& field, bool present,
                     double value, const std::string& unit) {
  if (!present) Fail(source, field, "is missing; give it in " + unit);
  if (!(value > 0)) {
    std::ostringstream s;
    s << "is " << value << ", but it must be greater than zero (in " << unit << ")";
    Fail(source, field, s.str());
  }
}

void ValidateMemory(const std::string& source, const std::string& name, bool present,
                    const config::MemoryConfig& memory) {
  if (!present) Fail(source, "chip." + name, "is missing; give capacity_bytes and bandwidth");
  RequirePositive(source, "chip." + name + ".capacity_bytes", memory.has_capacity_bytes(),
                  static_cast<double>(memory.capacity_bytes()), "bytes");
  RequirePositive(source, "chip." + name + ".bandwidth_bytes_per_s",
                  memory.has_bandwidth_bytes_per_s(), memory.bandwidth_bytes_per_s(),
                  "bytes per second");
}

}  // namespace

void ValidateTopology(config::Topology& topology, const std::string& source) {
  if (!topology.has_chip())
    Fail(source, "chip", "is missing; every slice needs a chip description");
  auto& chip = *topology.mutable_chip();
  RequirePositive(source, "chip.clock_hz", chip.has_clock_hz(), chip.clock_hz(), "Hz");
  if (chip.tensor_cores() == 0) Fail(source, "chip.tensor_cores", "is 0; a chip needs a core");
  ValidateMemory(source, "hbm", chip.has_hbm(), chip.hbm());
  ValidateMemory(source, "vmem", chip.has_vmem(), chip.vmem());
  ValidateMemory(source, "smem", chip.has_smem(), chip.smem());
  RequirePositive(source, "chip.mxu_count", chip.has_mxu_count(), chip.mxu_count(), "MXUs");
  RequirePositive(source, "chip.mxu_size", chip.has_mxu_size(), chip.mxu_size(),
                  "rows of the square systolic array");
  if (chip.vpu_sublanes() == 0 || chip.vpu_lanes() == 0)
    Fail(source, "chip.vpu_sublanes", "and vpu_lanes must both be greater than zero");
  if (!chip.has_dma()) Fail(source, "chip.dma", "is missing; give the number of DMA engines");
  RequirePositive(source, "chip.dma.engines", chip.dma().has_engines(), chip.dma().engines(),
                  "concurrent DMAs");
  if (chip.dma().chunk_bytes() == 0)
    Fail(source, "chip.dma.chunk_bytes",
         "is 0, but DMAs move in chunks of at least one byte; try 524288 (512 KiB)");

  if (!topology.has_ici()) Fail(source, "ici", "is missing; give the link bandwidth and latency");
  RequirePositive(source, "ici.link_bandwidth_bytes_per_s",
                  topology.ici().has_link_bandwidth_bytes_per_s(),
                  topology.ici().link_bandwidth_bytes_per_s(), "bytes per second, one way");
  if (!topology.ici().has_hop_latency_ns())
    Fail(source, "ici.hop_latency_ns", "is missing; give the per-hop latency in ns");
  if (topology.ici().hop_latency_ns() < 0)
    Fail(source, "ici.hop_latency_ns", "is negative; a hop cannot take less than no time");

  if (!topology.has_mesh()) Fail(source, "mesh", "is missing; give its shape, e.g. shape: [4, 4]");
  auto& mesh = *topology.mutable_mesh();
  const int dims = mesh.shape_size();
  if (dims < 1 || dims > 3)
    Fail(source, "mesh.shape",
         "has " + std::to_string(dims) + " axes, but a torus has 1, 2 or 3 axes");
  for (int i = 0; i < dims; ++i) {
    if (mesh.shape(i) == 0)
      Fail(source, "mesh.shape", "has length 0 on axis " + std::to_string(i) + "; use 1 or more");
  }
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
  if (!topology.has_name()) topology.set_name(std::filesystem::path(source).stem().string());
}

config::Topology ParseTopology(const std::string& text, const std::string& source) {
  config::Topology topology;
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

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : EmbeddedPresets())
    names.push_back(name);
  return names;
}

const std::string& PresetText(const std::string& name) {
  auto it = EmbeddedPresets().find(name);
  if (it == EmbeddedPresets().end()) {
    std::string known;
    for (const auto& n : PresetNames())
      known += (known.empty() ? "" : ", ") + n;
    throw TopologyError("unknown topology '" + name + "': it is neither a preset (" + known +
                        ") nor a readable file");
  }
  return it->second;
}

config::Topology LoadTopology(const std::string& name_or_path) {
  if (EmbeddedPresets().count(name_or_path)) {
    return ParseTopology(PresetText(name_or_path), "preset " + name_or_path);
  }
  std::ifstream file(name_or_path);
  if (!file) PresetText(name_or_path);  // throws, listing the presets
  std::stringstream text;
  text << file.rdbuf();
  return ParseTopology(text.str(), name_or_path);
}

uint64_t ChipCount(const config::Topology& topology) {
  uint64_t count = 1;
  for (auto d : topology.mesh().shape())
    count *= d;
  return count;
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
