// tpusim topologies: the presets, with device count, shape and wraparound; --text NAME prints
// one preset's file, to copy and edit.

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

int RunTopologies(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(
      "tpusim topologies: list the slice presets (usable as --topology NAME)");
  options.add_options()("text", po::value<std::string>()->value_name("NAME"),
                        "print preset NAME as a .textproto file, to copy and edit");
  std::vector<std::string> operands;
  po::variables_map vm;
  if (!ParseCommandLine("topologies", argc, argv, options, 0, operands, vm)) return 0;
  if (vm.count("text")) {
    const std::string name = vm["text"].as<std::string>();
    if (!topologies::IsPreset(name))
      throw UsageError("topologies",
                       "--text " + name + " names no preset; `tpusim topologies` lists them.");
    std::cout << topologies::PresetText(name);
    return 0;
  }
  std::printf("%-19s %-7s %-10s %-10s %-30s %s\n", "preset", "devices", "shape", "axes",
              "wraparound", "chip");
  for (const auto& name : topologies::PresetNames()) {
    const auto t = topologies::LoadTopology(name);
    std::string axes, wrap;
    for (int i = 0; i < t.mesh().shape_size(); ++i) {
      axes += (i ? "," : "") + t.mesh().axis_names(i);
      wrap +=
          (i ? " " : "") + t.mesh().axis_names(i) + "=" + (t.mesh().wraparound(i) ? "yes" : "no");
    }
    if (t.mesh().twisted()) wrap += ", twisted";
    std::printf("%-19s %-7llu %-10s %-10s %-30s %s\n", name.c_str(),
                static_cast<unsigned long long>(topologies::DeviceCount(t)),
                topologies::ShapeString(t).c_str(), axes.c_str(), wrap.c_str(),
                t.chip().name().c_str());
  }
  return 0;
}

}  // namespace tpusim::cli
