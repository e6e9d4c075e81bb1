// tpusim topologies: the presets, with chip count, shape and wraparound.

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
  std::vector<std::string> operands;
  po::variables_map vm;
  if (!ParseCommandLine("topologies", argc, argv, options, 0, operands, vm)) return 0;
  std::printf("%-14s %-7s %-10s %-10s %-22s %s\n", "preset", "chips", "shape", "axes", "wraparound",
              "chip");
  for (const auto& name : topologies::PresetNames()) {
    const auto t = topologies::LoadTopology(name);
    std::string axes, wrap;
    for (int i = 0; i < t.mesh().shape_size(); ++i) {
      axes += (i ? "," : "") + t.mesh().axis_names(i);
      wrap +=
          (i ? " " : "") + t.mesh().axis_names(i) + "=" + (t.mesh().wraparound(i) ? "yes" : "no");
    }
    std::printf("%-14s %-7llu %-10s %-10s %-22s %s\n", name.c_str(),
                static_cast<unsigned long long>(topologies::ChipCount(t)),
                topologies::ShapeString(t).c_str(), axes.c_str(), wrap.c_str(),
                t.chip().name().c_str());
  }
  return 0;
}

}  // namespace tpusim::cli
