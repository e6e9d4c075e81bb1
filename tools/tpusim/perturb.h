#pragma once

// compare --perturb: how robust a schedule is to one straggler. Each schedule reruns N times,
// run i with one chip slowed by a factor (RunConfig::chip_slowdown: compute, DMA issue and
// memories), or with --perturb-links one link direction (RunConfig::link_slowdown: its
// bandwidth), drawn once from a seed so every schedule meets the same stragglers; the
// slowdowns relative to the unperturbed run give the median and worst in RunMetrics.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/tpusim/kernel_run.h"
#include "topologies/topology.pb.h"

namespace tpusim::cli {

struct PerturbOptions {
  int runs = 0;  // 0: no perturbation
  double factor = 2;
  uint64_t seed = 0;
  bool links = false;  // slow a link direction per run instead of a chip
};

// What one perturbed run slows: a chip, or one link direction leaving it.
struct Straggler {
  uint32_t chip = 0;
  std::string direction;  // "x+", as --slow-link names it; empty: the chip itself
  // "3", "3:x+": as --slow-chip and --slow-link name them.
  std::string Name() const;
  // "chip 3", "link 3:x+".
  std::string Describe() const;
};

// The stragglers of the perturbed runs, in run order: a mt19937_64 from the seed (a generator
// the C++ standard fixes bit for bit, so a seed gives the same stragglers everywhere), modulo
// the chips of `topology` (devices, on chips of chiplets) or, with options.links, modulo its
// link directions (LinkDirections' order).
std::vector<Straggler> PerturbedStragglers(const PerturbOptions& options,
                                           const config::Topology& topology);

// Every link direction --slow-link can name in a loaded topology, by chip index, then axis,
// the + way first: the ICI links, and the D2D links on chips of chiplets; the DCN between
// slices has NICs, not links, and none is listed.
std::vector<Straggler> LinkDirections(const config::Topology& topology);

// What the perturbed runs of one schedule found.
struct PerturbOutcome {
  std::vector<double> slowdowns;  // time / unperturbed time, per completed run
  // The first perturbed run that failed or computed a wrong result: its straggler and why.
  bool failed = false;
  Straggler failed_on;
  std::string failure;  // "FAILED: race" or "WRONG"
  std::string detail;   // the error or the mismatch
};

// Reruns `request` (its config already the unperturbed run's) once per straggler, its
// slowdown multiplied by `factor`; sets `row`'s perturbed metrics from the slowdowns against
// `row`'s time.
PerturbOutcome Perturb(KernelRunRequest request, const std::vector<Straggler>& stragglers,
                       double factor, KernelRunReport& row);

}  // namespace tpusim::cli
