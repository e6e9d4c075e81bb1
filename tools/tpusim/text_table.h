#pragma once

// A plain-text table whose columns fit their widest cell: the tables of compare, bench and
// sweep, with metric columns made from the metric table (tools/tpusim/run_metrics.h).

#include <ostream>
#include <string>
#include <vector>

#include "tools/tpusim/run_metrics.h"

namespace tpusim::cli {

class TextTable {
 public:
  struct Column {
    std::string header;
    std::string unit;   // a second header line, "(us)"; empty for none
    bool left = false;  // names read left-aligned, numbers right-aligned
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // A metric's column, in its fixed unit ("time" over "(us)") or in human units ("time").
  static Column Fixed(RunMetrics::Value RunMetrics::*metric);
  static Column Human(RunMetrics::Value RunMetrics::*metric);

  // One cell per column.
  void AddRow(std::vector<std::string> cells);
  // A line printed under the last row (an error, a mismatch), indented.
  void AddNote(std::string note);
  // `prefix` starts the header lines ("# " in bench's nccl-tests style), `row_prefix` the
  // rows.
  void Print(std::ostream& out, const std::string& prefix = "",
             const std::string& row_prefix = "") const;

 private:
  std::vector<Column> columns_;
  struct Row {
    std::vector<std::string> cells;
    std::vector<std::string> notes;
  };
  std::vector<Row> rows_;
};

// `text` as one CSV field: quoted when it holds a comma, a quote or a newline.
std::string CsvField(const std::string& text);

}  // namespace tpusim::cli
