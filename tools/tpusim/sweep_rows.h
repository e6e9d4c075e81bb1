#pragma once

// A sweep's rows and their outputs: the table, CSV and JSON of `tpusim sweep`, and the
// merge of the JSON outputs of its shards. Metric columns come from the metric table
// (tools/tpusim/run_metrics.h).

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tools/tpusim/run_metrics.h"
#include "tools/tpusim/sweep_plan.h"

namespace tpusim::cli {

struct SweepRow {
  size_t point = 0;
  std::vector<std::string> values;  // the point's value of each dimension of the plan
  RunMetrics metrics;
  std::string error;  // empty when the run completed and its data checked out

  bool ok() const { return error.empty(); }
};

struct SweepResult {
  SweepPlan plan;
  std::string shard;           // "2/8" for a shard's output, empty for a whole sweep
  std::vector<SweepRow> rows;  // by point

  bool ok() const;
  // The table's metric columns: time, bound, % of bound, busbw (when a row has one),
  // bytes moved per chip, peak HBM, data, the point's wall time.
  std::vector<RunMetrics::Value RunMetrics::*> Columns() const;
};

// The rows as a table under a one-line header, and a summary line.
void PrintSweepTable(const SweepResult& result, std::ostream& out);
// One line per row: point, each dimension, each metric's key, error.
void WriteSweepCsv(const SweepResult& result, std::ostream& out);
// {"sweep": ..., "points": N, "shard": "2/8" or null, "rows": [...]}; every row has its
// point, entry, topology, swept values under "params", each metric, and its error.
nlohmann::ordered_json SweepJson(const SweepResult& result);
// The whole sweep from the JSON outputs of its shards, read from `files`. Throws
// UsageError for a file that is not such an output, outputs of different sweeps, or a
// point in two files; `missing` gets the points no file has.
SweepResult MergeSweeps(const std::vector<std::string>& files, std::vector<size_t>& missing);

}  // namespace tpusim::cli
