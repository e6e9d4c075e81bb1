#pragma once

// Where protobuf's TextFormat parser puts a topology's sub-messages: made before the parse,
// so that the parse does not ask protobuf for their prototypes (docs/performance-start-up.md,
// "Fifth pass").

#include "topologies/topology.pb.h"

namespace tpusim::topologies {

// Makes every sub-message a topology file can set (one element of each repeated message),
// then clears `topology`. Clearing keeps them allocated but unset: `topology` reads and
// serialises as an empty message, and the parse fills them in place.
void MakeParseTargets(config::Topology& topology);

}  // namespace tpusim::topologies
