#pragma once

// What one run measured, computed once from its dsl::RunResult (Measure), and the one table
// of those metrics (MetricFields): each one's JSON key and CSV column, its table header and
// fixed unit, its summary label and its description. `run`'s summary, every --json report,
// compare's and bench's columns and sweep's rows all read the metrics through this table,
// so a metric is added here once, and a column names its metric by member
// (&RunMetrics::busbw): a misspelt one does not compile.

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "dsl/shard_map.h"
#include "kernels/registry.h"

namespace tpusim::cli {

struct RunMetrics {
  // Empty when the metric does not apply to the run (busbw of a matmul, the data check of
  // a timing-only run, the process's RSS of a run in this process).
  using Value = std::optional<double>;

  Value sim_seconds;               // when the last chip finished
  Value bound_seconds;             // the entry's analytic bound
  Value percent_of_bound;          // bound / time
  Value algbw;                     // bytes/s: V / time (entries that move V bytes over an axis)
  Value busbw;                     // algbw x the entry's bus factor
  Value ici_bytes_per_chip;        // bytes each chip's outbound ICI links carried, mean
  Value peak_hbm_bytes;            // most HBM one chip's arrays held at once, max over chips
  Value exposed_comm_seconds;      // cores blocked in DMA or semaphore waits, mean over chips
  Value exposed_comm_percent;      // of the run
  Value mxu_utilisation;           // MXU busy / time, mean over chips (a fraction)
  Value busiest_link_utilisation;  // the most loaded link direction's busy / time
  Value async_wait_seconds;        // programs: waits in async collectives' *_done, mean
  // Compute kernels with a roofline (kernels::Bound::peak_flops > 0), per chip.
  Value flops;
  Value hbm_bytes;
  Value roofline_seconds;
  Value achieved_flops;  // FLOP/s
  Value peak_flops;
  Value percent_of_peak;
  // compare --perturb (tools/tpusim/perturb.h): time with one chip slowed / time without,
  // over the perturbed runs.
  Value perturbed_median_slowdown;
  Value perturbed_worst_slowdown;
  Value correct;  // 1 or 0 when the data was checked
  // What the run cost the host.
  Value wall_seconds;  // the simulation, in its process
  Value events;        // model events
  Value events_per_second;
  Value process_seconds;  // a run in a child process: the child's whole life
  Value peak_rss_bytes;   // ... and its peak resident memory
};

// How a metric reads: its human form in summaries ("1.234 ms", "45.00 GB/s") and its JSON
// type (counts and byte totals are integers, checks are booleans).
enum class MetricKind {
  kSeconds,
  kBytes,
  kBytesPerSecond,
  kFlops,
  kFlopsPerSecond,
  kPercent,   // already a percentage
  kFraction,  // shown as a percentage
  kCount,
  kPerSecond,
  kCheck,  // 1: ok, 0: WRONG
  kRatio,  // a factor: "1.85x"
};

struct MetricField {
  RunMetrics::Value RunMetrics::*value;
  const char* key;     // JSON key and CSV column
  double key_scale;    // the JSON value is the metric x key_scale (1e9: seconds as ns)
  const char* header;  // table column
  const char* unit;    // a fixed-unit column's unit ("us"); "" for none
  double unit_scale;   // a fixed-unit column shows the metric x unit_scale
  int decimals;        // ... with this many decimals
  MetricKind kind;
  const char* label;        // the summary's line label
  const char* description;  // what it is, for summaries, help and docs
};

// Every metric, in the order reports list them.
std::span<const MetricField> MetricFields();
// The field of `value`; every member of RunMetrics has one.
const MetricField& FieldOf(RunMetrics::Value RunMetrics::*value);

// What Measure needs besides the result.
struct RunFacts {
  kernels::Bound bound;
  int devices = 1;
  int cores_per_device = 1;  // TensorCores: MXU utilisation counts every core's MXUs
  // Entries that move an array of V bytes over an axis and declare a bus factor: V and the
  // factor for that axis (nccl-tests' busbw = algbw x factor).
  uint64_t bandwidth_bytes = 0;
  double bus_factor = 0;
  double wall_seconds = 0;
  bool checked = false;  // the data was compared with the reference
  bool correct = false;
};
RunMetrics Measure(const dsl::RunResult& result, const RunFacts& facts);
// The busiest link direction's name (for compare's JSON); empty for a run without links.
std::string BusiestLink(const dsl::RunResult& result);

// Each metric under its key (null when absent).
void WriteMetrics(const RunMetrics& metrics, nlohmann::ordered_json& json);
// The metrics of a report WriteMetrics wrote; keys it lacks stay empty.
RunMetrics ReadMetrics(const nlohmann::ordered_json& json);

// "1.234 ms", "45.00 GB/s", "95.1%", "ok"; "-" when absent.
std::string HumanValue(const MetricField& field, const RunMetrics& metrics);
// In the field's fixed unit: "1234.000"; "-" when absent.
std::string FixedValue(const MetricField& field, const RunMetrics& metrics);
// As JSON writes it ("1234000", "true"); "" when absent.
std::string CsvValue(const MetricField& field, const RunMetrics& metrics);
// Every metric's key, and every metric's CsvValue, comma-separated in table order.
std::string CsvHeader();
std::string CsvCells(const RunMetrics& metrics);

}  // namespace tpusim::cli
