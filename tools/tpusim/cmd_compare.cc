// tpusim compare ENTRY...: several schedules (kernels or programs) of one computation on identical
// inputs, side by side, with where each one's time went.

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/same_computation.h"

namespace tpusim::cli {

namespace {

constexpr const char* kDefinitions = R"(Columns:
  time         simulated time of the run (the last chip to finish its kernel)
  speedup      the first kernel's time / this kernel's time
  exposed comm time the cores sat blocked in DMA or semaphore waits (wait, wait_send,
               wait_recv, semaphore_wait), averaged over chips; and as % of the run.
               Communication hidden behind compute does not count.
  MXU util     MXU busy time / run time, averaged over chips
  busiest ICI  busy time of the most loaded link direction / run time
  ICI/chip     bytes each chip's ICI links carried (forwarded hops too), mean over chips
  peak HBM     the most HBM one chip's arrays held at once (inputs, outputs, temporaries
               over their live ranges), max over chips
  bound        lower bound: max(compute at peak MXU FLOP/s, communication at the link
               bound of docs/references.md §3); the kernel registry gives both parts
               (a program counts the bytes its layout must move; `tpusim run` shows
               the formula)
  of bound     bound / time: 100% means the schedule reaches the bound
  data         whether every chip's output matches the host reference
  specs        programs whose PartitionSpecs differ: each row's in_specs -> out_specs
)";

struct Row {
  KernelRunReport report;
  double exposed_seconds = 0;
  double mxu_utilisation = 0;
  double busiest_link_utilisation = 0;
  std::string busiest_link;
};

Row Summarise(KernelRunReport report) {
  Row row;
  const double t = report.sim_seconds;
  const auto& cores = report.stats.cores;
  double blocked = 0, mxu = 0;
  for (const auto& c : cores) {
    blocked += static_cast<double>(c.blocked) * 1e-12;
    mxu += static_cast<double>(c.mxu_busy) * 1e-12;
  }
  if (!cores.empty()) {
    row.exposed_seconds = blocked / cores.size();
    row.mxu_utilisation = t > 0 ? mxu / cores.size() / t : 0;
  }
  for (const auto& link : report.stats.links) {
    const double u = t > 0 ? static_cast<double>(link.busy) * 1e-12 / t : 0;
    if (u > row.busiest_link_utilisation) {
      row.busiest_link_utilisation = u;
      row.busiest_link = link.name;
    }
  }
  row.report = std::move(report);
  return row;
}

double Speedup(const Row& row, const Row& first) {
  const double t = row.report.sim_seconds;
  return t > 0 ? first.report.sim_seconds / t : 0;
}

double ExposedPercent(const Row& row) {
  const double t = row.report.sim_seconds;
  return t > 0 ? 100 * row.exposed_seconds / t : 0;
}

void PrintTable(const Contract& contract, const std::vector<Row>& rows) {
  const auto& r0 = rows.front().report;
  // Output dtypes may differ between schedules: then each row names its own.
  // So may a program's PartitionSpecs: then the header shows the global problem and each
  // row its own specs.
  bool dtypes_differ = false, specs_differ = false;
  for (const auto& row : rows) {
    dtypes_differ = dtypes_differ || row.report.out_dtype != r0.out_dtype;
    specs_differ = specs_differ || row.report.specs != r0.specs;
  }
  // The problem as the parameters gave it: V for collectives, m/k/n for matmuls and
  // programs, the dtype; and the axis, when the entries run over one.
  // Appends, not "literal" + std::string: GCC 12 at -O3 misreports the latter (-Wrestrict).
  std::string problem;
  const auto add = [&problem](const std::string& part) {
    if (!problem.empty()) problem += ' ';
    problem += part;
  };
  if (r0.bytes) add(HumanBytes(r0.bytes));
  for (const auto& [name, value] :
       {std::pair<std::string, int64_t>{"m", r0.m}, {"k", r0.k}, {"n", r0.n}}) {
    if (value) add(name + "=" + std::to_string(value));
  }
  if (!r0.dtype.empty()) add(r0.dtype);
  std::string where;
  if (r0.axis.empty()) {
    where.append(" (").append(std::to_string(r0.chips)).append(" chips)");
  } else {
    where.append(", axis '").append(r0.axis).append("' (");
    where.append(std::to_string(r0.axis_size))
        .append(r0.wraparound ? " chips, wraparound)" : " chips)");
  }
  std::printf("%s on %s%s%s%s%s\n", contract.Format(!specs_differ, !dtypes_differ).c_str(),
              r0.topology.c_str(), where.c_str(), problem.empty() ? "" : ", ", problem.c_str(),
              r0.functional ? "" : ", timing only");
  size_t width = 6;
  for (const auto& row : rows)
    width = std::max(width, row.report.kernel.size());
  const int name_width = static_cast<int>(width);
  std::printf("%-*s %12s %8s %12s %7s %9s %12s %10s %10s %12s %9s", name_width, "kernel", "time",
              "speedup", "exposed comm", "%", "MXU util", "busiest ICI", "ICI/chip", "peak HBM",
              "bound", "of bound");
  std::printf(dtypes_differ ? "  %-9s data" : "  data", "out dtype");
  std::printf(specs_differ ? "         specs (in -> out)\n" : "\n");
  for (const auto& row : rows) {
    const auto& r = row.report;
    const std::string data = !r.completed ? std::string("FAILED: ") + ErrorKindName(*r.error_kind)
                             : !r.functional ? "not checked"
                             : r.correct     ? "correct"
                                             : "WRONG";
    std::printf("%-*s %12s %7.2fx %12s %6.1f%% %8.1f%% %11.1f%% %10s %10s %12s %8.1f%%", name_width,
                r.kernel.c_str(), HumanSeconds(r.sim_seconds).c_str(), Speedup(row, rows.front()),
                HumanSeconds(row.exposed_seconds).c_str(), ExposedPercent(row),
                100 * row.mxu_utilisation, 100 * row.busiest_link_utilisation,
                HumanBytes(static_cast<uint64_t>(r.ici_bytes_per_chip)).c_str(),
                HumanBytes(r.peak_hbm_bytes).c_str(),
                r.bound_seconds > 0 ? HumanSeconds(r.bound_seconds).c_str() : "-",
                r.percent_of_bound());
    if (dtypes_differ) std::printf("  %-9s", r.out_dtype.c_str());
    std::printf(specs_differ ? "  %-11s  %s\n" : "  %s\n", data.c_str(), r.specs.c_str());
    if (!r.completed) std::printf("    %s\n", r.error.c_str());
    if (r.completed && r.functional && !r.correct) std::printf("    %s\n", r.mismatch.c_str());
  }
}

nlohmann::ordered_json Json(const std::vector<Row>& rows) {
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    auto j = row.report.ToJson();
    j["speedup"] = Speedup(row, rows.front());
    j["exposed_comm_ns"] = row.exposed_seconds * 1e9;
    j["exposed_comm_percent"] = ExposedPercent(row);
    j["mxu_utilisation"] = row.mxu_utilisation;
    j["busiest_link"] = row.busiest_link;
    j["busiest_link_utilisation"] = row.busiest_link_utilisation;
    j["contract"] = row.report.contract;
    json.push_back(j);
  }
  return json;
}

}  // namespace

int RunCompare(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string trace_dir;
  po::options_description options(
      "tpusim compare ENTRY... --topology T [--PARAMETER VALUE]... [options]\n\n"
      "Runs each kernel or program on identical global inputs (same shapes and seed), checks\n"
      "each result, and prints one row per entry. An ENTRY that names a family (see\n"
      "`tpusim list`) stands for its members in registration order: `compare seed003`.\n"
      "The parameter flags are those the entries declare (`tpusim compare ENTRY... --help`\n"
      "lists them); a flag you set must be a parameter of every entry.\n"
      "Entries must compute the same global problem: the same input types and shapes and\n"
      "the same output shapes. Output dtypes may differ (an f32 or bf16 accumulation is a\n"
      "schedule's choice); the table then shows each row's. Kernels must also agree on their\n"
      "PartitionSpecs. A program's specs are a schedule's choice (mlp/dp and mlp/tp lay one\n"
      "problem out differently; the table then shows each row's), so programs must instead\n"
      "agree on the host reference: the same inputs, and reference outputs that agree within\n"
      "their tolerances (timing-only runs build no reference, so only the types are checked).\n\n" +
      std::string(kDefinitions) + "\noptions");
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  const ParamFlags params;
  options.add_options()("trace-dir", po::value(&trace_dir),
                        "write DIR/ENTRY.pftrace for each entry ('/' in a name becomes '_'); "
                        "the track layouts match, so two traces open side by side")(
      "json", "end the output with the rows as one JSON array on the last line");
  std::vector<std::string> names;
  po::variables_map vm;
  if (!ParseCommandLine("compare", argc, argv, options, -1, names, vm, params)) return 0;
  const std::vector<const kernels::KernelInfo*> infos = EntriesNamed("compare", names);
  if (infos.empty())
    throw UsageError("compare",
                     "name the entries to compare, e.g. all_gather_ring all_gather_bidi.");
  std::vector<std::string> entries;
  for (const auto* info : infos)
    entries.push_back(info->name);
  const kernels::ParamValues given = params.Given("compare", vm, infos);
  if (!vm.count("topology"))
    throw UsageError("compare", "--topology is required, e.g. --topology v5e-4x4.");
  KernelRunRequest request = common.Request("compare", vm);
  request.params = given;

  // Refuse before running anything when the entries do not compute the same thing.
  const Contract first =
      CheckSameComputation(infos, dsl::Mesh(request.topology), given, request.functional);
  if (ParseOnly()) return 0;
  if (!trace_dir.empty()) PrepareTraceDirectory("compare", trace_dir);

  std::vector<Row> rows;
  for (const auto& name : entries) {
    request.kernel = name;
    std::string file = name;
    std::replace(file.begin(), file.end(), '/', '_');
    request.trace_path = trace_dir.empty() ? "" : trace_dir + "/" + file + ".pftrace";
    if (isatty(2)) std::cerr << "\rrunning " << name << "..." << std::flush;
    rows.push_back(Summarise(RunKernel(request)));
  }
  if (isatty(2)) std::cerr << "\r\033[K";
  PrintTable(first, rows);
  bool all_ok = true;
  for (const auto& row : rows)
    all_ok = all_ok && row.report.ok();
  if (!trace_dir.empty()) {
    std::cout << "traces in " << trace_dir
              << "/ (open them side by side at https://ui.perfetto.dev)\n";
  }
  if (vm.count("json")) std::cout << Json(rows).dump() << std::endl;
  return all_ok ? 0 : 1;
}

}  // namespace tpusim::cli
