#pragma once

// --slow-chip and --slow-link, the stragglers a run takes as flags (RunConfig::chip_slowdown
// and link_slowdown). A chip is named by its index (row-major over the mesh, as `tpusim
// describe` numbers them) or by its coordinates, one per mesh axis, separated by commas:
//   --slow-chip 5=2           chip 5 twice as slow
//   --slow-chip 1,2=2,0,0=3   chip (1, 2) twice as slow, chip (0, 0) three times
//   --slow-link 0,1:x+=4      the x+ link leaving chip (0, 1) at a quarter of its bandwidth
// A factor never holds a comma and a chip never an '=', so the pairs separate unambiguously.
// Link directions are named as a topology's link_override names them (topologies/
// topology.proto).

#include <string>
#include <vector>

#include "base/run_config.h"
#include "topologies/topology.pb.h"

namespace tpusim::cli {

// Throw UsageError naming `command`, the flag, the value and the fix. `topology`: the slice,
// or null when the command has none yet; then a chip index is taken as given (the engine
// checks its range), and coordinates and link directions are checked for syntax only and
// left out of the result: call again with the topology for the run's config.
std::vector<double> ParseSlowChips(const std::string& command, const std::string& text,
                                   const config::Topology* topology);
std::vector<base::LinkSlowdown> ParseSlowLinks(const std::string& command, const std::string& text,
                                               const config::Topology* topology);

}  // namespace tpusim::cli
