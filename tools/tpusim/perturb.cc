#include "tools/tpusim/perturb.h"

#include <algorithm>
#include <random>

#include "base/errors.h"

namespace tpusim::cli {

std::vector<uint32_t> PerturbedChips(const PerturbOptions& options, uint64_t chips) {
  std::mt19937_64 random(options.seed);
  std::vector<uint32_t> picked;
  for (int i = 0; i < options.runs; ++i)
    picked.push_back(static_cast<uint32_t>(random() % chips));
  return picked;
}

PerturbOutcome Perturb(KernelRunRequest request, const std::vector<uint32_t>& chips, double factor,
                       KernelRunReport& row) {
  PerturbOutcome outcome;
  const std::vector<double> nominal = request.config.chip_slowdown;
  request.trace_path.clear();  // the unperturbed run's trace is the one asked for
  for (const uint32_t chip : chips) {
    request.config.chip_slowdown = nominal;
    if (request.config.chip_slowdown.size() <= chip)
      request.config.chip_slowdown.resize(chip + 1, 1.0);
    request.config.chip_slowdown[chip] *= factor;
    const KernelRunReport run = RunKernel(request);
    if (!run.ok()) {
      if (!outcome.failed) {
        outcome.failed = true;
        outcome.failed_chip = chip;
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
