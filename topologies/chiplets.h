#pragma once

// Chips of several chiplets, each its own device (config::ChipletConfig; docs/model.md
// "Chiplets"): the loader's part. As multi-slice topologies add a slice axis in front of the
// mesh (topologies/multislice.h), chiplets add a chiplet axis after it, so every reader of the
// mesh counts devices; the link along that axis is the die-to-die (D2D) link.

#include <string>
#include <vector>

#include "topologies/topology.pb.h"

namespace tpusim::topologies {

// A loaded topology's mesh ends with the chiplet axis: taken off, so that the chips' own mesh
// is validated as a file gives it.
void RemoveChipletAxis(const std::string& source, config::Topology& topology);
// The chiplets block's fields in their ranges, and the chiplet axis after the validated chips'
// mesh. Refuses what tpusim cannot build with chiplets yet (multi-slice, twisted tori).
void AddChipletAxis(const std::string& source, config::Topology& topology);
// Overrides name a chip, and hold for each of its chiplets: coordinates of a loaded mesh
// without the chiplet axis's.
std::vector<int> OfChip(const config::Topology& topology, const std::vector<int>& coords);
// Whether `direction` ("chiplet+") names the D2D link of a topology with chiplets.
bool IsD2dDirection(const config::Topology& topology, const std::string& direction);

}  // namespace tpusim::topologies
