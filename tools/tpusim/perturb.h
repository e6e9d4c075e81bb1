#pragma once

// compare --perturb: how robust a schedule is to one straggler. Each schedule reruns N times,
// run i with one chip slowed by a factor (RunConfig::chip_slowdown: compute, DMA issue and
// memories), the chips drawn once from a seed so every schedule meets the same stragglers;
// the slowdowns relative to the unperturbed run give the median and worst in RunMetrics.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/tpusim/kernel_run.h"

namespace tpusim::cli {

struct PerturbOptions {
  int runs = 0;  // 0: no perturbation
  double factor = 2;
  uint64_t seed = 0;
};

// The chip each perturbed run slows, in run order: a mt19937_64 from `seed` (a generator the
// C++ standard fixes bit for bit, so a seed gives the same chips everywhere), modulo `chips`.
std::vector<uint32_t> PerturbedChips(const PerturbOptions& options, uint64_t chips);

// What the perturbed runs of one schedule found.
struct PerturbOutcome {
  std::vector<double> slowdowns;  // time / unperturbed time, per completed run
  // The first perturbed run that failed or computed a wrong result: its chip and why.
  bool failed = false;
  uint32_t failed_chip = 0;
  std::string failure;  // "FAILED: race" or "WRONG"
  std::string detail;   // the error or the mismatch
};

// Reruns `request` (its config already the unperturbed run's) once per chip in `chips`,
// that chip's slowdown multiplied by `factor`; sets `row`'s perturbed metrics from the
// slowdowns against `row`'s time.
PerturbOutcome Perturb(KernelRunRequest request, const std::vector<uint32_t>& chips, double factor,
                       KernelRunReport& row);

}  // namespace tpusim::cli
