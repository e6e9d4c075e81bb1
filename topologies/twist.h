#pragma once

// Twisted tori (docs/model.md, "Twisted tori"; docs/references.md §2): which slices may be
// twisted, and where a twisted wraparound link lands. The loader checks the first; the
// model's Torus (sim/torus.h) wires the second.

#include <string>
#include <vector>

#include "topologies/topology.pb.h"

namespace tpusim::topologies {

// Per axis, what crossing that axis's wraparound link the + way adds to every axis's
// coordinate (modulo its length; the - way subtracts it). A twistable shape has axes of
// exactly two lengths, K and 2K: each K-axis's row holds K at every 2K-axis, the rest is 0.
// Empty when `shape` is not twistable.
std::vector<std::vector<int>> TwistShifts(const std::vector<int>& shape);

// The shapes a generation sells twisted ("4x4x8"), in the order docs/references.md §2 lists
// them; empty for a generation that sells none.
const std::vector<std::string>& TwistedShapes(config::Generation generation);

// Throws TopologyError when mesh.twisted is set on a slice that cannot be twisted (always:
// the shape has no K and 2K axes, or an axis does not wrap around), or on one its generation
// does not sell twisted (unless allow_nonphysical). The mesh must already be validated.
void CheckTwist(const config::Topology& topology, const std::string& source);

}  // namespace tpusim::topologies
