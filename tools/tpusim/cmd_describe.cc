// tpusim describe TOPOLOGY: the model's module tree for a slice, each module with its
// parameters as the model uses them (after the topology's overrides, and the --slices,
// --slow-chip and --slow-link that run takes), or the memory timing and compute models a
// topology can choose from.

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "sim/chip.h"
#include "sim/compute_models.h"
#include "sim/memory_models.h"
#include "sim/parameters.h"
#include "sim/simulation.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

template <typename Model>
void PrintModelList(const char* heading, const std::vector<const Model*>& models) {
  std::printf("%s\n", heading);
  for (const Model* model : models) {
    std::printf("  %-12s %s\n", model->name.c_str(), model->summary.c_str());
    // A model's parameters are numbers with a default and a range (sim/model_registry.h).
    const auto number = [](const std::optional<base::ParamValue>& value) {
      return value && value->Number() ? sim::FormatNumber(*value->Number()) : std::string("?");
    };
    for (const auto& p : model->parameters) {
      std::printf("      %-14s default %s, %s to %s %s: %s\n", p.name().c_str(),
                  number(p.default_value()).c_str(), number(p.min()).c_str(),
                  number(p.max()).c_str(), p.unit().c_str(), p.description().c_str());
    }
  }
}

void PrintModels() {
  PrintModelList("memory timing models (topology: hbm { model: NAME parameter { name: ... } }):",
                 sim::MemoryModels::All());
  PrintModelList("compute models (topology: chip { cost { model: NAME parameter { ... } } }):",
                 sim::ComputeModels::All());
}

// "1,3" -> the chip at those coordinates, or a usage error naming the mesh.
base::ChipId ChipFromCoords(const std::string& text, const base::DeviceGrid& grid) {
  std::vector<int> coords;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      size_t used = 0;
      coords.push_back(std::stoi(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw UsageError("describe", "--chip " + text + " is not a list of coordinates like 1,3.");
    }
  }
  if (!grid.Contains(coords)) {
    std::string shape;
    for (int n : grid.shape()) {
      if (!shape.empty()) shape += 'x';
      shape += std::to_string(n);
    }
    throw UsageError("describe", "--chip " + text + " is not a chip of the " + shape +
                                     " mesh; give one coordinate per axis, each from 0.");
  }
  return grid.ChipAt(coords);
}

}  // namespace

int RunDescribe(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(
      "tpusim describe TOPOLOGY: the module tree of a slice (slice.chip_1_3.hbm, ...), each "
      "module with its parameters");
  options.add_options()("topology,t", po::value<std::string>(),
                        "preset name (see `tpusim topologies`) or .textproto path")(
      "chip", po::value<std::string>(), "only this chip's modules, by coordinates: --chip 1,3")(
      "models", "list the memory timing models a topology can choose, with their parameters");
  // The slice `run` would build with the same flags: its slices and its slowed chips and links.
  CommonOptions common;
  common.Add(options, kSliceOptions);
  std::vector<std::string> operands;
  po::variables_map vm;
  if (!ParseCommandLine("describe", argc, argv, options, 1, operands, vm)) return 0;
  const std::string topology_name = OperandOrOption("describe", operands, vm, "topology");
  if (vm.count("models")) {
    // The models are the same for every slice: a topology or chip would be ignored.
    if (!topology_name.empty() || vm.count("chip") || vm.count("slices") || vm.count("slow-chip") ||
        vm.count("slow-link"))
      throw UsageError("describe",
                       "--models lists the models every topology can choose, so it takes no "
                       "topology, --chip, --slices, --slow-chip or --slow-link; drop them, or "
                       "drop --models to see one slice.");
    PrintModels();
    return 0;
  }
  if (topology_name.empty())
    throw UsageError("describe", "give a topology: a preset name or a .textproto path.");
  const config::Topology topology = common.Slice(topology_name, vm);
  base::EngineOptions engine{.functional = false};
  common.Slowdowns("describe", &topology, engine);
  sim::Simulation simulation(topology, engine);
  sim::Slice& slice = simulation.slice();
  if (vm.count("chip")) {
    const base::ChipId chip = ChipFromCoords(vm["chip"].as<std::string>(), slice.torus().grid());
    std::cout << sim::DescribeTree(slice, /*depth=*/0, /*recurse=*/false)
              << sim::DescribeTree(slice.chip(chip), 1);
  } else {
    std::cout << sim::DescribeTree(slice);
  }
  return 0;
}

}  // namespace tpusim::cli
