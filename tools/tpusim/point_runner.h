#pragma once

// Runs `tpusim run ... --json` in child processes, the tpusim binary itself started again
// (fork and exec), a few at a time: each point of a sweep or row of a bench gets its own
// process, so runs share no memory, a crash is one failed point, and RSS is per run. Draws
// a progress bar on stderr when it is a terminal.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tpusim/run_metrics.h"

namespace tpusim::cli {

struct PointOutcome {
  bool reported = false;          // the child printed its --json report
  nlohmann::ordered_json report;  // KernelRunReport::ToJson() of the child's run
  RunMetrics metrics;             // from the report, with the child's time and peak RSS
  std::string error;              // why the point failed; empty when it ran and checked out
  int exit_code = 0;              // the child's, or 128 + signal

  bool ok() const { return error.empty(); }
};

class PointRunner {
 public:
  // `jobs` children at a time; `progress`: draw the bar on stderr.
  PointRunner(int jobs, bool progress);

  // Runs `tpusim ARGS` for each ARGS of `commands` (the --load libraries of this process
  // are passed on first) and returns their outcomes in the order of `commands`.
  // `done(i, outcome)` is called as each finishes, in the order they finish.
  std::vector<PointOutcome> Run(
      const std::vector<std::vector<std::string>>& commands,
      const std::function<void(size_t, const PointOutcome&)>& done = nullptr) const;

 private:
  int jobs_;
  bool progress_;
};

// "[#####.....]  12/40 points  0:37 elapsed  ETA 1:23": the bar PointRunner draws.
std::string ProgressLine(size_t done, size_t total, double elapsed_seconds);

}  // namespace tpusim::cli
