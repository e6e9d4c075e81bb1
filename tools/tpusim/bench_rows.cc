#include "tools/tpusim/bench_rows.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/text_table.h"

namespace tpusim::cli {

namespace {

using Member = RunMetrics::Value RunMetrics::*;

struct BenchColumn {
  Member metric;
  int width;
};

// nccl-tests' columns, then the simulator's own cost.
constexpr BenchColumn kColumns[] = {
    {&RunMetrics::sim_seconds, 12},
    {&RunMetrics::algbw, 9},
    {&RunMetrics::busbw, 9},
    {&RunMetrics::bound_seconds, 12},
    {&RunMetrics::percent_of_bound, 7},
    {&RunMetrics::ici_bytes_per_chip, 9},
    {&RunMetrics::peak_hbm_bytes, 9},
    {&RunMetrics::correct, 6},
    {&RunMetrics::wall_seconds, 8},
    {&RunMetrics::events, 10},
    {&RunMetrics::events_per_second, 7},
    {&RunMetrics::peak_rss_bytes, 8},
};

std::string Pad(const std::string& text, int width, bool left = false) {
  const size_t size = static_cast<size_t>(std::max(width, 0));
  if (text.size() >= size) return text;
  const std::string pad(size - text.size(), ' ');
  return left ? text + pad : pad + text;
}

std::string Line(const std::string& prefix, const BenchLayout& layout, const std::string& entry,
                 const std::string& value, const std::vector<std::string>& cells) {
  std::string line =
      prefix + (layout.entry_width ? Pad(entry, layout.entry_width, true) : "") + Pad(value, 12);
  for (size_t c = 0; c < std::size(kColumns); ++c) {
    line += ' ';
    line += Pad(cells[c], kColumns[c].width);
  }
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

}  // namespace

bool BenchRow::completed() const {
  return outcome.reported && outcome.report.value("completed", false);
}

void PrintBenchHeader(std::ostream& out, const BenchLayout& layout) {
  std::vector<std::string> headers, units;
  for (const BenchColumn& column : kColumns) {
    const TextTable::Column c = TextTable::Fixed(column.metric);
    headers.push_back(c.header);
    units.push_back(c.unit);
  }
  const bool bytes = layout.param == "bytes";
  out << "#\n"
      << Line("# ", layout, "entry",
              bytes                  ? "size"
              : layout.param.empty() ? "point"
                                     : layout.param,
              headers)
      << "\n"
      << Line("# ", layout, "", bytes ? "(B)" : "", units) << "\n";
}

void PrintBenchRow(std::ostream& out, const BenchRow& row, const BenchLayout& layout) {
  std::vector<std::string> cells;
  for (const BenchColumn& column : kColumns) {
    const bool data = column.metric == &RunMetrics::correct;
    cells.push_back(data && !row.completed()
                        ? "FAILED"
                        : FixedValue(FieldOf(column.metric), row.outcome.metrics));
  }
  out << Line("  ", layout, row.entry, layout.param.empty() ? "-" : std::to_string(row.value),
              cells)
      << "\n";
}

std::string BenchSummary(const std::vector<BenchRow>& rows, size_t entries, double total_wall) {
  double busbw_sum = 0, min_pct = 0, max_pct = 0, events = 0, sim_wall = 0;
  int completed = 0, with_busbw = 0;
  bool all_ok = true;
  for (const BenchRow& row : rows) {
    all_ok = all_ok && row.ok();
    if (!row.completed()) continue;
    const RunMetrics& m = row.outcome.metrics;
    const double pct = m.percent_of_bound.value_or(0);
    min_pct = completed == 0 ? pct : std::min(min_pct, pct);
    max_pct = completed == 0 ? pct : std::max(max_pct, pct);
    busbw_sum += m.busbw.value_or(0);
    with_busbw += m.busbw.has_value();
    events += m.events.value_or(0);
    sim_wall += m.wall_seconds.value_or(0);
    ++completed;
  }
  char summary[320];
  std::snprintf(
      summary, sizeof summary,
      "# %d of %zu %s completed%s; avg bus bandwidth %s; %% of bound "
      "min %.1f%% max %.1f%%; wall %.3f s total (%.3f s simulating, %.2f M events/s)",
      completed, rows.size(), entries > 1 ? "rows" : "sizes", all_ok ? "" : " (FAILURES above)",
      with_busbw ? FormatNumber("%.2f GB/s", busbw_sum / with_busbw / 1e9).c_str() : "-", min_pct,
      max_pct, total_wall, sim_wall, sim_wall > 0 ? events / sim_wall / 1e6 : 0.0);
  return summary;
}

std::string BenchCsvHeader(const BenchLayout& layout) {
  std::string header = layout.entry_width ? "entry," : "";
  if (!layout.param.empty()) header += layout.param + ",";
  return header + CsvHeader() + ",error";
}

std::string BenchCsvRow(const BenchRow& row, const BenchLayout& layout) {
  std::string line = layout.entry_width ? CsvField(row.entry) + "," : "";
  if (!layout.param.empty()) line += std::to_string(row.value) + ",";
  return line + CsvCells(row.outcome.metrics) + "," + CsvField(row.problem);
}

nlohmann::ordered_json BenchJson(const std::vector<BenchRow>& rows, const BenchLayout& layout) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const BenchRow& row : rows) {
    nlohmann::ordered_json j =
        row.outcome.reported ? row.outcome.report : nlohmann::ordered_json{{"kernel", row.entry}};
    if (!layout.param.empty()) j[layout.param] = row.value;
    WriteMetrics(row.outcome.metrics, j);  // with the child's time and RSS
    if (!row.problem.empty()) j["problem"] = row.problem;
    array.push_back(std::move(j));
  }
  return array;
}

Plot BenchPlot(const std::vector<BenchRow>& rows, const BenchLayout& layout,
               const std::string& title) {
  const bool busbw = std::all_of(rows.begin(), rows.end(), [](const BenchRow& row) {
    return !row.completed() || row.outcome.metrics.busbw.has_value();
  });
  Plot plot;
  plot.title = title;
  plot.x_label = layout.param == "bytes" ? "size (V)" : layout.param;
  plot.x_bytes = layout.param.find("bytes") != std::string::npos;
  plot.y_label = busbw ? "bus bandwidth (GB/s)" : "simulated time (us)";
  std::vector<std::string> entries;
  std::map<std::string, std::pair<PlotSeries, PlotSeries>> series;  // measured, bound
  for (const BenchRow& row : rows) {
    if (!series.count(row.entry)) entries.push_back(row.entry);
    auto& [measured, bound] = series[row.entry];
    const RunMetrics& m = row.outcome.metrics;
    if (!row.completed() || !m.sim_seconds || *m.sim_seconds <= 0) continue;
    const double x = static_cast<double>(row.value);
    measured.x.push_back(x);
    measured.y.push_back(busbw ? *m.busbw / 1e9 : *m.sim_seconds * 1e6);
    if (!m.bound_seconds) continue;
    // The busbw a run at the bound would reach: busbw x time / bound.
    bound.x.push_back(x);
    bound.y.push_back(busbw ? *m.busbw / 1e9 * *m.sim_seconds / *m.bound_seconds
                            : *m.bound_seconds * 1e6);
  }
  for (const std::string& entry : entries) {
    auto& [measured, bound] = series[entry];
    measured.title = entry;
    bound.title = entry + " at its bound";
    bound.bound = true;
    plot.series.push_back(measured);
    if (!bound.x.empty()) plot.series.push_back(bound);
  }
  return plot;
}

}  // namespace tpusim::cli
