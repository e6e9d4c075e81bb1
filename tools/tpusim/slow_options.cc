#include "tools/tpusim/slow_options.h"

#include <cctype>
#include <cmath>
#include <optional>

#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

// One CHIP[:DIRECTION]=FACTOR pair of a flag's value.
struct SlowPair {
  std::vector<uint32_t> chip;  // an index, or one coordinate per axis
  std::string direction;       // --slow-link only
  std::string factor_text;
  double factor = 0;
};

// "1,2" as numbers; nullopt for anything else.
std::optional<std::vector<uint32_t>> Numbers(const std::string& text) {
  std::vector<uint32_t> numbers;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string number = text.substr(start, end - start);
    if (number.empty() || number.size() > 9) return std::nullopt;
    for (const char c : number) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
    numbers.push_back(static_cast<uint32_t>(std::stoul(number)));
    start = end + 1;
  }
  return numbers;
}

// Splits `text` into its pairs: each runs to its '=', and its factor from there to the next
// comma. `links`: the chip ends at a ':' and a direction follows. nullopt: bad syntax.
std::optional<std::vector<SlowPair>> Pairs(const std::string& text, bool links) {
  std::vector<SlowPair> pairs;
  size_t start = 0;
  while (start < text.size()) {
    const size_t equals = text.find('=', start);
    if (equals == std::string::npos) return std::nullopt;
    const size_t end = std::min(text.find(',', equals), text.size());
    SlowPair pair;
    std::string chip = text.substr(start, equals - start);
    if (links) {
      const size_t colon = chip.find(':');
      if (colon == std::string::npos) return std::nullopt;
      pair.direction = chip.substr(colon + 1);
      chip.resize(colon);
      if (pair.direction.empty()) return std::nullopt;
    }
    const auto numbers = Numbers(chip);
    if (!numbers) return std::nullopt;
    pair.chip = *numbers;
    pair.factor_text = text.substr(equals + 1, end - equals - 1);
    size_t used = 0;
    try {
      pair.factor = std::stod(pair.factor_text, &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used != pair.factor_text.size()) return std::nullopt;
    pairs.push_back(std::move(pair));
    start = end + 1;
    if (end + 1 == text.size()) return std::nullopt;  // a trailing comma
  }
  if (pairs.empty()) return std::nullopt;
  return pairs;
}

std::string ChipText(const std::vector<uint32_t>& chip) {
  if (chip.size() == 1) return std::to_string(chip[0]);
  std::string text = "(";
  for (size_t i = 0; i < chip.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(chip[i]);
  }
  return text + ")";
}

// The index of the chip `pair` names in `topology`, checked; `flag` names it in errors.
uint32_t ChipIndex(const std::string& command, const std::string& flag, const SlowPair& pair,
                   const config::Topology& topology) {
  const auto& mesh = topology.mesh();
  const uint64_t chips = topologies::DeviceCount(topology);
  if (pair.chip.size() == 1) {
    if (pair.chip[0] >= chips) {
      throw UsageError(command, flag + " names chip " + std::to_string(pair.chip[0]) +
                                    ", and the slice has " + std::to_string(chips) +
                                    " chips, numbered from 0 to " + std::to_string(chips - 1) +
                                    ".");
    }
    return pair.chip[0];
  }
  if (pair.chip.size() != static_cast<size_t>(mesh.shape_size())) {
    std::string message = flag + " names chip " + ChipText(pair.chip) + ", but the mesh has " +
                          std::to_string(mesh.shape_size()) + " axes; give ";
    message += std::to_string(mesh.shape_size());
    message += " coordinates, or one chip index.";
    throw UsageError(command, message);
  }
  base::Coords coords;
  for (int axis = 0; axis < mesh.shape_size(); ++axis) {
    const uint32_t at = pair.chip[static_cast<size_t>(axis)];
    if (at >= mesh.shape(axis)) {
      std::string message = flag + " names chip " + ChipText(pair.chip) + ", and axis '";
      message += mesh.axis_names(axis);
      message += "' has " + std::to_string(mesh.shape(axis)) + " chips, numbered from 0 to ";
      message += std::to_string(mesh.shape(axis) - 1);
      message += ".";
      throw UsageError(command, message);
    }
    coords.push_back(static_cast<int>(at));
  }
  return static_cast<uint32_t>(dsl::Mesh(topology).DeviceAt(coords));
}

bool GoodFactor(double factor) {
  return std::isfinite(factor) && factor > 0;
}

}  // namespace

std::vector<double> ParseSlowChips(const std::string& command, const std::string& text,
                                   const config::Topology* topology) {
  const auto pairs = Pairs(text, false);
  if (!pairs) {
    throw UsageError(command, "--slow-chip is '" + text +
                                  "'; give CHIP=FACTOR pairs separated by commas, CHIP a chip "
                                  "index or its coordinates, e.g. 3=2 (chip 3 twice as slow), "
                                  "1,2=2 (chip (1, 2)) or 0=1.5,5=2.");
  }
  std::vector<double> slowdown;
  for (const SlowPair& pair : *pairs) {
    if (!GoodFactor(pair.factor)) {
      throw UsageError(command, "--slow-chip gives chip " + ChipText(pair.chip) + " the factor " +
                                    pair.factor_text +
                                    "; a factor multiplies the chip's compute time (and divides "
                                    "its memories' bandwidth) and must be a finite number "
                                    "greater than 0 (1 is nominal).");
    }
    if (!topology && pair.chip.size() > 1) continue;  // checked again with the topology
    const uint32_t chip =
        topology ? ChipIndex(command, "--slow-chip", pair, *topology) : pair.chip[0];
    if (slowdown.size() <= chip) slowdown.resize(chip + 1, 1.0);
    slowdown[chip] = pair.factor;
  }
  return slowdown;
}

std::vector<base::LinkSlowdown> ParseSlowLinks(const std::string& command, const std::string& text,
                                               const config::Topology* topology) {
  const auto pairs = Pairs(text, true);
  if (!pairs) {
    throw UsageError(command, "--slow-link is '" + text +
                                  "'; give CHIP:DIRECTION=FACTOR pairs separated by commas, CHIP "
                                  "a chip index or its coordinates and DIRECTION a mesh axis and "
                                  "+ or -, e.g. 0,1:x+=4 (the x+ link of chip (0, 1) at a "
                                  "quarter of its bandwidth).");
  }
  std::vector<base::LinkSlowdown> links;
  for (const SlowPair& pair : *pairs) {
    std::string link = "the ";
    link += pair.direction;
    link += " link of chip ";
    link += ChipText(pair.chip);
    if (!GoodFactor(pair.factor)) {
      throw UsageError(command, "--slow-link gives " + link + " the factor " + pair.factor_text +
                                    "; a factor divides the link's bandwidth and must be a "
                                    "finite number greater than 0 (1 is nominal).");
    }
    if (!topology) {
      if (pair.chip.size() == 1) links.push_back({pair.chip[0], pair.direction, pair.factor});
      continue;  // checked again with the topology
    }
    const auto& mesh = topology->mesh();
    const uint32_t chip = ChipIndex(command, "--slow-link", pair, *topology);
    if (topologies::LinkAxis(mesh, pair.direction) < 0) {
      throw UsageError(command, "--slow-link names direction '" + pair.direction + "' of chip " +
                                    ChipText(pair.chip) + "; " + topologies::DirectionHint(mesh) +
                                    ".");
    }
    const std::string missing = topologies::MissingLink(
        mesh, dsl::Mesh(*topology).CoordsOf(static_cast<int>(chip)), pair.direction);
    if (!missing.empty()) {
      throw UsageError(command, "--slow-link names " + link + ", which does not exist: " + missing +
                                    "; name a link the slice has.");
    }
    std::erase_if(links, [&](const base::LinkSlowdown& l) {
      return l.chip == chip && l.direction == pair.direction;
    });
    links.push_back({chip, pair.direction, pair.factor});
  }
  return links;
}

}  // namespace tpusim::cli
