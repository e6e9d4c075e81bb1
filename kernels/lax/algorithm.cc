#include "kernels/lax/algorithm.h"

namespace tpusim::kernels::lax {

const char* AlgorithmName(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kBidiRing:
      return "bidi_ring";
    case Algorithm::kDirect:
      return "direct";
    case Algorithm::kRecursiveDoubling:
      return "recursive_doubling";
  }
  return "?";
}

const std::vector<Algorithm>& AllAlgorithms() {
  static const std::vector<Algorithm> all = {Algorithm::kBidiRing, Algorithm::kRing,
                                             Algorithm::kDirect, Algorithm::kRecursiveDoubling};
  return all;
}

std::optional<Algorithm> AlgorithmNamed(const std::string& name) {
  for (Algorithm a : AllAlgorithms()) {
    if (name == AlgorithmName(a)) return a;
  }
  return std::nullopt;
}

std::string AlgorithmNameList() {
  std::string names;
  for (Algorithm a : AllAlgorithms())
    names += (names.empty() ? "" : ", ") + std::string(AlgorithmName(a));
  return names;
}

}  // namespace tpusim::kernels::lax
