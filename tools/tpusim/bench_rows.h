#pragma once

// bench's rows in the style of nccl-tests: one fixed-width line per value as it finishes,
// columns in the units of the metric table (tools/tpusim/run_metrics.h), a summary line,
// the rows as CSV and JSON, and busbw against size as a plot.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tools/tpusim/plot.h"
#include "tools/tpusim/point_runner.h"

namespace tpusim::cli {

struct BenchRow {
  std::string entry;
  uint64_t value = 0;  // the swept parameter's
  PointOutcome outcome;
  bool over_budget = false;  // slower or bigger than --max-wall / --max-rss
  std::string problem;       // the run's error, and what broke the budget

  bool completed() const;
  bool ok() const { return outcome.ok() && !over_budget; }
};

struct BenchLayout {
  std::string param = "bytes";  // the swept parameter; empty: one run of each entry
  int entry_width = 0;          // the entry column's width; 0: one entry, no column
};

void PrintBenchHeader(std::ostream& out, const BenchLayout& layout);
void PrintBenchRow(std::ostream& out, const BenchRow& row, const BenchLayout& layout);
// "# 4 of 4 sizes completed; avg bus bandwidth ...; % of bound min ... max ...; wall ...".
std::string BenchSummary(const std::vector<BenchRow>& rows, size_t entries, double total_wall);
std::string BenchCsvHeader(const BenchLayout& layout);
std::string BenchCsvRow(const BenchRow& row, const BenchLayout& layout);
// Each row's report, with the swept value, the child's time and RSS, and its problem.
nlohmann::ordered_json BenchJson(const std::vector<BenchRow>& rows, const BenchLayout& layout);
// Bus bandwidth against the swept value, one series per entry, with the bandwidth the
// analytic bound allows dashed; simulated time for entries without a busbw.
Plot BenchPlot(const std::vector<BenchRow>& rows, const BenchLayout& layout,
               const std::string& title);

}  // namespace tpusim::cli
