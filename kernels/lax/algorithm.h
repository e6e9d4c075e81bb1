#pragma once

// The algorithms a lax collective can run (kernels/lax/collectives.h says which does which,
// kernels/lax/plan.h how one is chosen), by the names users force them with.

#include <optional>
#include <string>
#include <vector>

namespace tpusim::kernels::lax {

enum class Algorithm {
  kRing,               // one direction round the ring: X-1 steps of one block each
  kBidiRing,           // both directions: halfway round each way, or along a line both ways
  kDirect,             // one step: every device sends straight to every other (routed)
  kRecursiveDoubling,  // log2 X steps, exchanging with the device 2^k places away
};

// "ring", "bidi_ring", "direct", "recursive_doubling".
const char* AlgorithmName(Algorithm algorithm);
// The algorithm called `name`; nullopt for any other name.
std::optional<Algorithm> AlgorithmNamed(const std::string& name);
// Every algorithm, in the order ties are broken in: bidi_ring, ring, direct,
// recursive_doubling.
const std::vector<Algorithm>& AllAlgorithms();
// "ring, bidi_ring, direct, recursive_doubling".
std::string AlgorithmNameList();

}  // namespace tpusim::kernels::lax
