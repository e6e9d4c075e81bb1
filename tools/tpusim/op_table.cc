#include "tools/tpusim/op_table.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "tools/tpusim/cli.h"

namespace tpusim::cli {

namespace {

// Rows with a simulated `total`, the longest first (ties keep their order).
template <class Row>
std::vector<Row> LongestFirst(std::vector<Row> rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.total > b.total; });
  return rows;
}

double Seconds(base::Picoseconds ps) {
  return static_cast<double>(ps) * 1e-12;
}

std::string Share(double part, double whole) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return text;
}

// The busiest row of `kind` (compute: compute and kernel), by what counts for it.
const dsl::OpTime* Top(const std::vector<dsl::OpTime>& rows, bool communication) {
  const dsl::OpTime* top = nullptr;
  for (const dsl::OpTime& r : rows) {
    const bool comm = r.kind == "collective";
    if (comm != communication) continue;
    const base::Picoseconds v = communication ? r.exposed : r.total;
    if (!top || v > (communication ? top->exposed : top->total)) top = &r;
  }
  return top;
}

}  // namespace

void PrintOpTable(const KernelRunReport& report, size_t limit) {
  if (report.ops.empty()) return;
  const std::vector<dsl::OpTime> rows = LongestFirst(report.ops);
  const double run = report.sim_seconds();
  std::printf("  per op (device %d, the last to finish):\n", report.critical_device);
  std::printf("    %-30s %-22s %-18s %6s %12s %7s %12s\n", "step", "op", "kind", "count", "total",
              "share", "exposed comm");
  size_t shown = 0;
  double rest_total = 0, rest_exposed = 0;
  int64_t rest_count = 0;
  for (const dsl::OpTime& r : rows) {
    if (limit > 0 && shown >= limit) {
      rest_total += Seconds(r.total);
      rest_exposed += Seconds(r.exposed);
      rest_count += r.count;
      continue;
    }
    const std::string kind = r.kind + (r.async ? " (async)" : "");
    std::printf("    %-30s %-22s %-18s %6lld %12s %7s %12s\n", r.name.c_str(), r.op.c_str(),
                kind.c_str(), static_cast<long long>(r.count),
                HumanSeconds(Seconds(r.total)).c_str(), Share(Seconds(r.total), run).c_str(),
                r.exposed > 0 ? HumanSeconds(Seconds(r.exposed)).c_str() : "");
    ++shown;
  }
  if (rest_count > 0) {
    const std::string others = std::to_string(rows.size() - shown) + " more ops";
    std::printf("    %-30s %-22s %-18s %6lld %12s %7s %12s\n", others.c_str(), "", "",
                static_cast<long long>(rest_count), HumanSeconds(rest_total).c_str(),
                Share(rest_total, run).c_str(),
                rest_exposed > 0 ? HumanSeconds(rest_exposed).c_str() : "");
  }
}

std::string CriticalPath(const KernelRunReport& report) {
  if (report.ops.empty() || report.sim_seconds() <= 0) return "";
  double compute = 0, exposed = 0;
  for (const dsl::OpTime& r : report.ops) {
    if (r.kind == "collective") {
      exposed += Seconds(r.exposed);
    } else if (!r.async) {
      compute += Seconds(r.total);
    }
  }
  const double run = report.sim_seconds();
  std::string line = "device " + std::to_string(report.critical_device) + " ends at " +
                     HumanSeconds(run) + ": " + Share(compute, run) + " compute";
  if (const dsl::OpTime* top = Top(report.ops, false))
    line += " (" + top->name + " " + Share(Seconds(top->total), run) + ")";
  line += ", " + Share(exposed, run) + " exposed communication";
  if (const dsl::OpTime* top = Top(report.ops, true); top && top->exposed > 0)
    line += " (" + top->name + " " + Share(Seconds(top->exposed), run) + ")";
  line += ", " + Share(std::max(0.0, run - compute - exposed), run) + " other";
  return line;
}

nlohmann::ordered_json OpsJson(const KernelRunReport& report) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const dsl::OpTime& r : LongestFirst(report.ops)) {
    nlohmann::ordered_json row;
    row["name"] = r.name;
    row["op"] = r.op;
    row["kind"] = r.kind;
    row["async"] = r.async;
    row["count"] = r.count;
    row["total_ns"] = Seconds(r.total) * 1e9;
    row["share"] = report.sim_seconds() > 0 ? Seconds(r.total) / report.sim_seconds() : 0;
    row["exposed_ns"] = Seconds(r.exposed) * 1e9;
    rows.push_back(row);
  }
  return rows;
}

void PrintCollectiveTable(const KernelRunReport& report, size_t limit) {
  if (report.collectives.empty()) return;
  std::printf("  collectives (device %d; latency and bandwidth: the cost estimate's split):\n",
              report.critical_device);
  std::printf("    %-26s %-12s %-22s %5s %10s %12s %12s %11s %11s\n", "step", "op", "algorithm",
              "count", "bytes", "time", "busiest link", "latency", "bandwidth");
  size_t shown = 0;
  for (const dsl::CollectiveRecord& r : LongestFirst(report.collectives)) {
    if (limit > 0 && shown++ >= limit) {
      std::printf("    ... %zu more (--ops lists all)\n", report.collectives.size() - limit);
      break;
    }
    const std::string algorithm = r.algorithm + (r.forced ? " (forced)" : "");
    std::printf("    %-26s %-12s %-22s %5lld %10s %12s %12s %11s %11s\n", r.step.c_str(),
                r.op.c_str(), algorithm.c_str(), static_cast<long long>(r.count),
                HumanBytes(r.bytes).c_str(), HumanSeconds(Seconds(r.total)).c_str(),
                HumanBytes(static_cast<uint64_t>(r.busiest_link_bytes)).c_str(),
                HumanSeconds(r.latency_s).c_str(), HumanSeconds(r.bandwidth_s).c_str());
  }
}

nlohmann::ordered_json CollectivesJson(const KernelRunReport& report) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const dsl::CollectiveRecord& r : LongestFirst(report.collectives)) {
    nlohmann::ordered_json row;
    row["step"] = r.step;
    row["op"] = r.op;
    row["algorithm"] = r.algorithm;
    row["forced"] = r.forced;
    row["count"] = r.count;
    row["bytes"] = r.bytes;
    row["total_ns"] = Seconds(r.total) * 1e9;
    row["busiest_link_bytes"] = r.busiest_link_bytes;
    row["latency_ns"] = r.latency_s * 1e9;
    row["bandwidth_ns"] = r.bandwidth_s * 1e9;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace tpusim::cli
