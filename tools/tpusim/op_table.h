#pragma once

// A program's per-op table (where the time went, op by op, on the device that finished
// last), its critical path in one line, and its collectives (which algorithm each ran, and
// the estimate's split of its time into latency and bandwidth), for the summary and the JSON
// report.

#include <nlohmann/json.hpp>
#include <string>

#include "tools/tpusim/kernel_run.h"

namespace tpusim::cli {

// The rows sorted by total time: op, kind, count, total, share of the run, exposed
// communication. `limit` rows at most (0: all), the rest summed in one line.
void PrintOpTable(const KernelRunReport& report, size_t limit);
// "critical path: device 3 ends at 1.2 ms: 61% compute (fusion.2 40%), 30% exposed
// communication (all-reduce.1 25%), 9% other".
std::string CriticalPath(const KernelRunReport& report);
nlohmann::ordered_json OpsJson(const KernelRunReport& report);

// One line per collective record, the longest first: step, op, algorithm, count, operand
// bytes, simulated time, bytes on the busiest link, the estimated latency and bandwidth
// parts. `limit` rows at most (0: all).
void PrintCollectiveTable(const KernelRunReport& report, size_t limit);
nlohmann::ordered_json CollectivesJson(const KernelRunReport& report);

}  // namespace tpusim::cli
