#include "tools/tpusim/perturb.h"

#include <algorithm>
#include <random>

#include "base/errors.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

std::string Straggler::Name() const {
  std::string text = std::to_string(chip);
  if (!direction.empty()) {
    text += ':';
    text += direction;
  }
  return text;
}

std::string Straggler::Describe() const {
  std::string text = direction.empty() ? "chip " : "link ";  // += keeps GCC's -Wrestrict quiet
  text += Name();
  return text;
}

std::vector<Straggler> LinkDirections(const config::Topology& topology) {
  const auto& mesh = topology.mesh();
  const int axes = mesh.shape_size();
  std::vector<Straggler> links;
  const uint64_t chips = topologies::DeviceCount(topology);
  std::vector<int> coords(static_cast<size_t>(axes), 0);
  for (uint64_t chip = 0; chip < chips; ++chip) {
    for (int a = 0; a < axes; ++a) {
      const int n = static_cast<int>(mesh.shape(a));
      // The slice axis of a multi-slice mesh (its first) is the DCN's.
      if (n < 2 || (topology.has_multislice() && a == 0)) continue;
      const bool wraps = a < mesh.wraparound_size() && mesh.wraparound(a);
      for (const int way : {+1, -1}) {
        const int there = coords[static_cast<size_t>(a)] + way;
        if (!wraps && (there < 0 || there >= n)) continue;
        links.push_back(
            Straggler{static_cast<uint32_t>(chip), mesh.axis_names(a) + (way > 0 ? "+" : "-")});
      }
    }
    for (int a = axes - 1; a >= 0; --a) {  // row-major: the last axis counts fastest
      if (++coords[static_cast<size_t>(a)] < static_cast<int>(mesh.shape(a))) break;
      coords[static_cast<size_t>(a)] = 0;
    }
  }
  return links;
}

std::vector<Straggler> PerturbedStragglers(const PerturbOptions& options,
                                           const config::Topology& topology) {
  std::mt19937_64 random(options.seed);
  std::vector<Straggler> picked;
  if (options.links) {
    const std::vector<Straggler> links = LinkDirections(topology);
    if (links.empty()) return picked;
    for (int i = 0; i < options.runs; ++i)
      picked.push_back(links[random() % links.size()]);
    return picked;
  }
  const uint64_t chips = topologies::DeviceCount(topology);
  for (int i = 0; i < options.runs; ++i)
    picked.push_back(Straggler{static_cast<uint32_t>(random() % chips), ""});
  return picked;
}

PerturbOutcome Perturb(KernelRunRequest request, const std::vector<Straggler>& stragglers,
                       double factor, KernelRunReport& row) {
  PerturbOutcome outcome;
  const std::vector<double> nominal_chips = request.config.chip_slowdown;
  const std::vector<base::LinkSlowdown> nominal_links = request.config.link_slowdown;
  request.trace_path.clear();  // the unperturbed run's trace is the one asked for
  for (const Straggler& straggler : stragglers) {
    request.config.chip_slowdown = nominal_chips;
    request.config.link_slowdown = nominal_links;
    if (straggler.direction.empty()) {
      const uint32_t chip = straggler.chip;
      if (request.config.chip_slowdown.size() <= chip)
        request.config.chip_slowdown.resize(chip + 1, 1.0);
      request.config.chip_slowdown[chip] *= factor;
    } else {
      // A link the command line already slows gets both factors, as a chip does.
      request.config.link_slowdown.push_back(
          base::LinkSlowdown{straggler.chip, straggler.direction, factor});
    }
    const KernelRunReport run = RunKernel(request);
    if (!run.ok()) {
      if (!outcome.failed) {
        outcome.failed = true;
        outcome.failed_on = straggler;
        outcome.failure = run.completed ? "WRONG" : "FAILED: ";
        if (!run.completed) outcome.failure += ErrorKindName(*run.error_kind);
        outcome.detail = run.completed ? run.mismatch : run.error;
      }
      continue;
    }
    if (row.sim_seconds() > 0) outcome.slowdowns.push_back(run.sim_seconds() / row.sim_seconds());
  }
  std::vector<double> sorted = outcome.slowdowns;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    const size_t middle = sorted.size() / 2;
    row.metrics.perturbed_median_slowdown =
        sorted.size() % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    row.metrics.perturbed_worst_slowdown = sorted.back();
  }
  return outcome;
}

}  // namespace tpusim::cli
