#include "tools/tpusim/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "tools/tpusim/cli.h"

namespace tpusim::cli {

namespace {

using M = RunMetrics;
using K = MetricKind;
constexpr double kMiB = 1.0 / (1 << 20);

// The one table. Summaries, reports, CSV files and table columns all come from here.
constexpr MetricField kFields[] = {
    {&M::sim_seconds, "sim_time_ns", 1e9, "time", "us", 1e6, 3, K::kSeconds, "simulated time",
     "when the last chip finished"},
    {&M::bound_seconds, "analytic_ns", 1e9, "bound", "us", 1e6, 3, K::kSeconds, "analytic bound",
     "the entry's lower bound on the time"},
    {&M::percent_of_bound, "percent_of_bound", 1, "%bound", "%", 1, 1, K::kPercent, "of bound",
     "bound / simulated time"},
    {&M::algbw, "algbw_gbps", 1e-9, "algbw", "GB/s", 1e-9, 2, K::kBytesPerSecond, "algorithm bw",
     "V / time"},
    {&M::busbw, "busbw_gbps", 1e-9, "busbw", "GB/s", 1e-9, 2, K::kBytesPerSecond, "bus bw",
     "algbw x the bus factor"},
    {&M::ici_bytes_per_chip, "ici_bytes_per_chip", 1, "ICI/chip", "MiB", kMiB, 2, K::kBytes,
     "ICI bytes/chip", "sent over each chip's links, mean"},
    {&M::peak_hbm_bytes, "peak_hbm_bytes", 1, "peak HBM", "MiB", kMiB, 2, K::kBytes,
     "peak HBM/chip", "max over chips"},
    {&M::exposed_comm_seconds, "exposed_comm_ns", 1e9, "exposed comm", "us", 1e6, 3, K::kSeconds,
     "exposed comm", "cores blocked in DMA or semaphore waits, mean over chips"},
    {&M::exposed_comm_percent, "exposed_comm_percent", 1, "%exposed", "%", 1, 1, K::kPercent,
     "exposed share", "exposed comm / simulated time"},
    {&M::mxu_utilisation, "mxu_utilisation", 1, "MXU util", "%", 100, 1, K::kFraction,
     "MXU utilisation", "MXU busy / time"},
    {&M::busiest_link_utilisation, "busiest_link_utilisation", 1, "busiest ICI", "%", 100, 1,
     K::kFraction, "busiest ICI", "the most loaded link direction's busy time / time"},
    {&M::async_wait_seconds, "async_wait_ns", 1e9, "async waits", "us", 1e6, 3, K::kSeconds,
     "async waits", "exposed async collectives, mean over chips"},
    {&M::flops, "flops", 1, "FLOPs", "GFLOP", 1e-9, 3, K::kFlops, "FLOPs/chip",
     "MXU FLOPs per chip"},
    {&M::hbm_bytes, "hbm_bytes", 1, "HBM bytes", "MiB", kMiB, 2, K::kBytes, "HBM traffic",
     "HBM bytes per chip of the blocking"},
    {&M::roofline_seconds, "roofline_ns", 1e9, "roofline", "us", 1e6, 3, K::kSeconds,
     "roofline bound", "max(FLOPs / peak, HBM bytes / HBM bandwidth)"},
    {&M::achieved_flops, "achieved_flops_per_s", 1, "TFLOP/s", "", 1e-12, 1, K::kFlopsPerSecond,
     "achieved", "FLOPs / time"},
    {&M::peak_flops, "peak_flops_per_s", 1, "peak", "TFLOP/s", 1e-12, 1, K::kFlopsPerSecond,
     "MXU peak", "one chip's MXUs"},
    {&M::percent_of_peak, "percent_of_peak", 1, "%peak", "%", 1, 1, K::kPercent, "of MXU peak",
     "achieved / MXU peak"},
    {&M::perturbed_median_slowdown, "perturbed_median_slowdown", 1, "median slow", "x", 1, 3,
     K::kRatio, "perturbed median",
     "time with one random chip slowed / time without, the median over the perturbed runs"},
    {&M::perturbed_worst_slowdown, "perturbed_worst_slowdown", 1, "worst slow", "x", 1, 3,
     K::kRatio, "perturbed worst", "... and the largest"},
    {&M::correct, "correct", 1, "data", "", 1, 0, K::kCheck, "data",
     "every chip's outputs match the host reference"},
    {&M::wall_seconds, "wall_seconds", 1, "wall", "s", 1, 3, K::kSeconds, "wall time",
     "host seconds the simulation took"},
    {&M::events, "events", 1, "events", "", 1, 0, K::kCount, "model events",
     "callbacks the model ran"},
    {&M::events_per_second, "events_per_second", 1, "Mev/s", "", 1e-6, 2, K::kPerSecond,
     "event rate", "model events per host second"},
    {&M::process_seconds, "process_seconds", 1, "process", "s", 1, 3, K::kSeconds, "process time",
     "the run's child process from start to exit: set-up, run, check"},
    {&M::peak_rss_bytes, "peak_rss_mib", kMiB, "RSS", "MiB", kMiB, 1, K::kBytes, "peak RSS",
     "peak resident memory of the run's child process"},
};

double Seconds(base::Picoseconds ps) {
  return static_cast<double>(ps) * 1e-12;
}

}  // namespace

std::span<const MetricField> MetricFields() {
  return kFields;
}

const MetricField& FieldOf(RunMetrics::Value RunMetrics::*value) {
  for (const MetricField& field : kFields) {
    if (field.value == value) return field;
  }
  throw std::logic_error("a RunMetrics member has no row in the metric table (run_metrics.cc)");
}

RunMetrics Measure(const dsl::RunResult& result, const RunFacts& facts) {
  RunMetrics m;
  const double t = Seconds(result.time());
  m.sim_seconds = t;
  if (facts.bound.seconds > 0) {
    m.bound_seconds = facts.bound.seconds;
    if (t > 0) m.percent_of_bound = 100 * facts.bound.seconds / t;
  }
  if (facts.bandwidth_bytes > 0 && facts.bus_factor > 0 && t > 0) {
    m.algbw = static_cast<double>(facts.bandwidth_bytes) / t;
    m.busbw = *m.algbw * facts.bus_factor;
  }
  double ici_bytes = 0;
  for (const auto& link : result.stats.links)
    ici_bytes += static_cast<double>(link.bytes);
  m.ici_bytes_per_chip = ici_bytes / std::max(1, facts.devices);
  uint64_t peak_hbm = 0;
  for (const uint64_t peak : result.peak_hbm_bytes)
    peak_hbm = std::max(peak_hbm, peak);
  m.peak_hbm_bytes = static_cast<double>(peak_hbm);

  const auto& cores = result.stats.cores;
  if (!cores.empty()) {
    double blocked = 0, mxu = 0;
    for (const auto& core : cores) {
      blocked += Seconds(core.blocked);
      mxu += Seconds(core.mxu_busy);
    }
    m.exposed_comm_seconds = blocked / static_cast<double>(cores.size());
    if (t > 0) {
      m.exposed_comm_percent = 100 * *m.exposed_comm_seconds / t;
      m.mxu_utilisation =
          mxu / static_cast<double>(cores.size() * std::max(1, facts.cores_per_device)) / t;
    }
  }
  if (t > 0) {
    double busiest = 0;
    for (const auto& link : result.stats.links)
      busiest = std::max(busiest, Seconds(link.busy) / t);
    m.busiest_link_utilisation = busiest;
  }
  if (!result.async_wait.empty()) {
    double wait = 0;
    for (const base::Picoseconds w : result.async_wait)
      wait += Seconds(w);
    m.async_wait_seconds = wait / static_cast<double>(result.async_wait.size());
  }
  if (facts.bound.peak_flops > 0) {
    m.flops = facts.bound.flops;
    m.hbm_bytes = facts.bound.hbm_bytes;
    m.roofline_seconds = facts.bound.seconds;
    m.peak_flops = facts.bound.peak_flops;
    if (t > 0) {
      m.achieved_flops = facts.bound.flops / t;
      m.percent_of_peak = 100 * *m.achieved_flops / facts.bound.peak_flops;
    }
  }
  if (facts.checked) m.correct = facts.correct ? 1 : 0;
  m.wall_seconds = facts.wall_seconds;
  m.events = static_cast<double>(result.stats.events);
  if (facts.wall_seconds > 0) m.events_per_second = *m.events / facts.wall_seconds;
  return m;
}

std::string BusiestLink(const dsl::RunResult& result) {
  const base::PortStats* busiest = nullptr;
  for (const auto& link : result.stats.links) {
    if (!busiest || link.busy > busiest->busy) busiest = &link;
  }
  return busiest && busiest->busy > 0 ? busiest->name : "";
}

namespace {

nlohmann::ordered_json JsonValue(const MetricField& field, const RunMetrics::Value& value) {
  if (!value) return nullptr;
  if (field.kind == K::kCheck) return *value != 0;
  const double scaled = *value * field.key_scale;
  // Counts and byte totals read as integers when they are whole.
  const bool whole = (field.kind == K::kCount || field.kind == K::kBytes) && scaled >= 0 &&
                     scaled < 9e15 && std::floor(scaled) == scaled;
  if (whole) return static_cast<uint64_t>(scaled);
  return scaled;
}

}  // namespace

void WriteMetrics(const RunMetrics& metrics, nlohmann::ordered_json& json) {
  for (const MetricField& field : kFields)
    json[field.key] = JsonValue(field, metrics.*field.value);
}

RunMetrics ReadMetrics(const nlohmann::ordered_json& json) {
  RunMetrics metrics;
  for (const MetricField& field : kFields) {
    const auto it = json.find(field.key);
    if (it == json.end()) continue;
    if (it->is_boolean()) {
      metrics.*field.value = it->get<bool>() ? 1 : 0;
    } else if (it->is_number()) {
      metrics.*field.value = it->get<double>() / field.key_scale;
    }
  }
  return metrics;
}

std::string HumanValue(const MetricField& field, const RunMetrics& metrics) {
  const RunMetrics::Value& value = metrics.*field.value;
  if (!value) return "-";
  const double v = *value;
  switch (field.kind) {
    case K::kSeconds:
      return HumanSeconds(v);
    case K::kBytes:
      return HumanBytes(static_cast<uint64_t>(std::llround(v)));
    case K::kBytesPerSecond:
      return HumanRate(v);
    case K::kFlops:
      return FormatNumber("%.3f GFLOP", v * 1e-9);
    case K::kFlopsPerSecond:
      return FormatNumber("%.1f TFLOP/s", v * 1e-12);
    case K::kPercent:
      return FormatNumber("%.1f%%", v);
    case K::kFraction:
      return FormatNumber("%.1f%%", 100 * v);
    case K::kCount:
      return FormatNumber("%.0f", v);
    case K::kPerSecond:
      return FormatNumber("%.2f M/s", v * 1e-6);
    case K::kCheck:
      return v != 0 ? "ok" : "WRONG";
    case K::kRatio:
      return FormatNumber("%.2fx", v);
  }
  return "-";
}

std::string FixedValue(const MetricField& field, const RunMetrics& metrics) {
  const RunMetrics::Value& value = metrics.*field.value;
  if (!value) return "-";
  if (field.kind == K::kCheck) return *value != 0 ? "ok" : "WRONG";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", field.decimals, *value * field.unit_scale);
  return text;
}

std::string CsvValue(const MetricField& field, const RunMetrics& metrics) {
  const RunMetrics::Value& value = metrics.*field.value;
  return value ? JsonValue(field, value).dump() : "";
}

std::string CsvHeader() {
  std::string header;
  for (const MetricField& field : kFields) {
    if (!header.empty()) header += ',';
    header += field.key;
  }
  return header;
}

std::string CsvCells(const RunMetrics& metrics) {
  std::string cells;
  for (size_t i = 0; i < std::size(kFields); ++i) {
    if (i > 0) cells += ',';
    cells += CsvValue(kFields[i], metrics);
  }
  return cells;
}

}  // namespace tpusim::cli
