#include "tools/tpusim/sweep_rows.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "base/text.h"
#include "kernels/params.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/text_table.h"

namespace tpusim::cli {

namespace {

using Member = RunMetrics::Value RunMetrics::*;

// What the data column says: the check, or that the point failed before it.
std::string DataCell(const SweepRow& row) {
  if (!row.ok() && !row.metrics.correct) return "FAILED";
  return HumanValue(FieldOf(&RunMetrics::correct), row.metrics);
}

// A value as JSON: a number when it is one, else text.
nlohmann::ordered_json JsonValue(const std::string& text) {
  const auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_number()) return parsed;
  return text;
}

std::string Describe(const SweepResult& result) {
  std::string text;
  const auto& dims = result.plan.dimensions();
  for (const char* name : {"entry", "topology"}) {
    for (const auto& dim : dims) {
      if (dim.axis.name != name) continue;
      if (!text.empty()) text += " on ";
      text += kernels::JoinList(dim.axis.values);
    }
  }
  std::string swept;
  for (const size_t d : result.plan.Swept())
    base::AppendListItem(swept, ", ", dims[d].axis.name);
  return text + (swept.empty() ? "" : ", sweeping " + swept);
}

SweepResult ReadOutput(const std::string& file) {
  std::ifstream in(file);
  if (!in)
    throw UsageError("sweep",
                     "--merge cannot read '" + file + "'; name the files the shards wrote.");
  std::stringstream text;
  text << in.rdbuf();
  const std::string what = "'" + file + "' is not the --json output of tpusim sweep";
  const auto json = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("sweep") ||
      !json.contains("rows") || !json["rows"].is_array()) {
    throw UsageError("sweep", what + "; merge the files that `tpusim sweep ... --json` wrote.");
  }
  SweepResult result;
  try {
    result.plan = SweepPlan::FromJson(json["sweep"]);
    if (json.contains("shard") && json["shard"].is_string())
      result.shard = json["shard"].get<std::string>();
    for (const auto& row : json["rows"]) {
      SweepRow r;
      r.point = row.at("point").get<size_t>();
      if (r.point >= result.plan.points())
        throw std::runtime_error("point " + std::to_string(r.point) + " is past its sweep's end");
      r.values = result.plan.ValuesAt(r.point);
      r.metrics = ReadMetrics(row);
      if (row.contains("error") && row["error"].is_string())
        r.error = row["error"].get<std::string>();
      result.rows.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    throw UsageError("sweep", what + ": " + e.what() + ".");
  }
  return result;
}

}  // namespace

bool SweepResult::ok() const {
  return std::all_of(rows.begin(), rows.end(), [](const SweepRow& row) { return row.ok(); });
}

std::vector<Member> SweepResult::Columns() const {
  std::vector<Member> columns = {&RunMetrics::sim_seconds, &RunMetrics::bound_seconds,
                                 &RunMetrics::percent_of_bound};
  if (std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.metrics.busbw; }))
    columns.push_back(&RunMetrics::busbw);
  columns.insert(columns.end(), {&RunMetrics::ici_bytes_per_chip, &RunMetrics::peak_hbm_bytes,
                                 &RunMetrics::correct, &RunMetrics::process_seconds});
  return columns;
}

void PrintSweepTable(const SweepResult& result, std::ostream& out) {
  const auto& dims = result.plan.dimensions();
  const std::vector<size_t> swept = result.plan.Swept();
  out << "# tpusim sweep " << Describe(result) << ": " << result.plan.points() << " points"
      << (result.shard.empty() ? "" : ", shard " + result.shard + " of them") << "\n";
  std::vector<TextTable::Column> columns;
  for (const size_t d : swept) {
    // Names read left-aligned, numbers right-aligned.
    const auto& values = dims[d].axis.values;
    const bool names = std::any_of(values.begin(), values.end(),
                                   [](const std::string& v) { return !JsonValue(v).is_number(); });
    columns.push_back({dims[d].axis.name, "", names});
  }
  const std::vector<Member> metrics = result.Columns();
  for (const Member metric : metrics)
    columns.push_back(TextTable::Human(metric));
  TextTable table(std::move(columns));
  for (const SweepRow& row : result.rows) {
    std::vector<std::string> cells;
    for (const size_t d : swept)
      cells.push_back(row.values[d]);
    for (const Member metric : metrics) {
      cells.push_back(metric == &RunMetrics::correct ? DataCell(row)
                                                     : HumanValue(FieldOf(metric), row.metrics));
    }
    table.AddRow(std::move(cells));
    if (!row.ok()) table.AddNote(row.error.substr(0, row.error.find('\n')));  // JSON: all
  }
  table.Print(out);
  const size_t ok = static_cast<size_t>(std::count_if(result.rows.begin(), result.rows.end(),
                                                      [](const SweepRow& r) { return r.ok(); }));
  out << "# " << ok << " of " << result.rows.size() << " points completed and checked out"
      << (ok == result.rows.size() ? "" : " (FAILURES above)") << "\n";
}

void WriteSweepCsv(const SweepResult& result, std::ostream& out) {
  out << "point";
  for (const auto& dim : result.plan.dimensions())
    out << "," << CsvField(dim.axis.name);
  out << "," << CsvHeader() << ",error\n";
  for (const SweepRow& row : result.rows) {
    out << row.point;
    for (const std::string& value : row.values)
      out << "," << CsvField(value);
    out << "," << CsvCells(row.metrics) << "," << CsvField(row.error) << "\n";
  }
}

nlohmann::ordered_json SweepJson(const SweepResult& result) {
  nlohmann::ordered_json json;
  json["sweep"] = result.plan.ToJson();
  json["points"] = result.plan.points();
  json["shard"] =
      result.shard.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(result.shard);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const auto& dims = result.plan.dimensions();
  for (const SweepRow& row : result.rows) {
    nlohmann::ordered_json j;
    j["point"] = row.point;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string& name = dims[d].axis.name;
      if (name == "entry" || name == "topology") {
        j[name] = row.values[d];
      } else {
        params[name] = JsonValue(row.values[d]);
      }
    }
    j["params"] = params;
    WriteMetrics(row.metrics, j);
    j["error"] = row.ok() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.error);
    rows.push_back(std::move(j));
  }
  json["rows"] = rows;
  return json;
}

SweepResult MergeSweeps(const std::vector<std::string>& files, std::vector<size_t>& missing) {
  if (files.empty())
    throw UsageError("sweep", "--merge needs the files the shards wrote: --merge shard-*.json.");
  SweepResult merged;
  std::map<size_t, std::string> seen;  // point -> file
  for (size_t f = 0; f < files.size(); ++f) {
    SweepResult part = ReadOutput(files[f]);
    if (f == 0) {
      merged.plan = part.plan;
    } else if (part.plan.ToJson() != merged.plan.ToJson()) {
      throw UsageError("sweep", "'" + files[f] + "' is a shard of another sweep than '" + files[0] +
                                    "' (its entries, topologies, parameters or "
                                    "options differ); merge the shards of one sweep.");
    }
    for (SweepRow& row : part.rows) {
      const auto [it, added] = seen.emplace(row.point, files[f]);
      if (!added) {
        throw UsageError("sweep", "point " + std::to_string(row.point) + " is in both '" +
                                      it->second + "' and '" + files[f] +
                                      "'; merge each shard's output once.");
      }
      merged.rows.push_back(std::move(row));
    }
  }
  std::sort(merged.rows.begin(), merged.rows.end(),
            [](const SweepRow& a, const SweepRow& b) { return a.point < b.point; });
  missing.clear();
  for (size_t point = 0; point < merged.plan.points(); ++point) {
    if (!seen.count(point)) missing.push_back(point);
  }
  return merged;
}

}  // namespace tpusim::cli
