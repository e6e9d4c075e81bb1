// tpusim compare ENTRY...: several schedules (kernels or programs) of one computation on identical
// inputs, side by side, with where each one's time went.

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/perturb.h"
#include "tools/tpusim/same_computation.h"
#include "tools/tpusim/text_table.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

// The table's metric columns, in order (run_metrics.h describes each).
constexpr RunMetrics::Value RunMetrics::*kColumns[] = {
    &RunMetrics::sim_seconds,
    &RunMetrics::exposed_comm_seconds,
    &RunMetrics::exposed_comm_percent,
    &RunMetrics::mxu_utilisation,
    &RunMetrics::busiest_link_utilisation,
    &RunMetrics::ici_bytes_per_chip,
    &RunMetrics::peak_hbm_bytes,
    &RunMetrics::bound_seconds,
    &RunMetrics::percent_of_bound,
};

// The columns --perturb adds.
constexpr RunMetrics::Value RunMetrics::*kPerturbColumns[] = {
    &RunMetrics::perturbed_median_slowdown,
    &RunMetrics::perturbed_worst_slowdown,
};

// The column definitions for --help: the metric table's, and compare's own.
std::string Definitions() {
  std::string text = "Columns:\n";
  const auto define = [&text](const std::string& name, const std::string& meaning) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-13s %s\n", name.c_str(), meaning.c_str());
    text += line;
  };
  define("speedup", "the first entry's time / this entry's time");
  for (const auto column : kColumns) {
    const MetricField& field = FieldOf(column);
    define(field.header, field.description);
  }
  for (const auto column : kPerturbColumns) {
    const MetricField& field = FieldOf(column);
    define(field.header, "(--perturb) " + std::string(field.description));
  }
  define("", "bound: max(compute at peak MXU FLOP/s, communication at the link bound of");
  define("", "docs/references.md §3), from the kernel registry (a program counts the bytes");
  define("", "its layout must move; `tpusim run` shows the formula)");
  define("data", "whether every chip's output matches the host reference");
  define("specs", "programs whose PartitionSpecs differ: each row's in_specs -> out_specs");
  return text;
}

double Speedup(const KernelRunReport& row, const KernelRunReport& first) {
  const double t = row.sim_seconds();
  return t > 0 ? first.sim_seconds() / t : 0;
}

// The data cell: the unperturbed run's check, then what a perturbed run found.
std::string DataCell(const KernelRunReport& r, const PerturbOutcome& perturbed) {
  if (!r.completed) return std::string("FAILED: ") + ErrorKindName(*r.error_kind);
  std::string cell = !r.functional() ? "not checked" : r.correct() ? "correct" : "WRONG";
  if (perturbed.failed) {
    cell += "; ";
    cell += perturbed.failure;
    cell += " with ";
    cell += perturbed.failed_on.Describe();
    cell += " slow";
  }
  return cell;
}

// `perturbed`: one per row, or empty without --perturb.
void PrintTable(const Contract& contract, const std::vector<KernelRunReport>& rows,
                const std::vector<PerturbOutcome>& perturbed) {
  const auto& r0 = rows.front();
  // Output dtypes may differ between schedules: then each row names its own.
  // So may a program's PartitionSpecs: then the header shows the global problem and each
  // row its own specs.
  bool dtypes_differ = false, specs_differ = false;
  for (const auto& row : rows) {
    dtypes_differ = dtypes_differ || row.out_dtype != r0.out_dtype;
    specs_differ = specs_differ || row.specs != r0.specs;
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
    where.append(" (").append(r0.SizeText()).append(")");
  } else {
    where.append(", axis '").append(r0.axis).append("' (");
    where.append(std::to_string(r0.axis_size)).append(" ").append(r0.devices_word);
    where.append(r0.wraparound ? ", wraparound)" : ")");
  }
  std::printf("%s on %s%s%s%s%s\n", contract.Format(!specs_differ, !dtypes_differ).c_str(),
              r0.topology.c_str(), where.c_str(), problem.empty() ? "" : ", ", problem.c_str(),
              r0.functional() ? "" : ", timing only");
  std::vector<TextTable::Column> columns = {{"kernel", "", true}};
  columns.push_back(TextTable::Human(kColumns[0]));
  columns.push_back({"speedup", ""});
  for (size_t c = 1; c < std::size(kColumns); ++c)
    columns.push_back(TextTable::Human(kColumns[c]));
  if (!perturbed.empty()) {
    for (const auto column : kPerturbColumns)
      columns.push_back(TextTable::Human(column));
  }
  if (dtypes_differ) columns.push_back({"out dtype", "", true});
  columns.push_back({"data", "", true});
  if (specs_differ) columns.push_back({"specs (in -> out)", "", true});
  TextTable table(std::move(columns));
  for (size_t i = 0; i < rows.size(); ++i) {
    const KernelRunReport& r = rows[i];
    const PerturbOutcome none;
    const PerturbOutcome& p = perturbed.empty() ? none : perturbed[i];
    std::vector<std::string> cells = {r.kernel};
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.2fx", Speedup(r, rows.front()));
    for (size_t c = 0; c < std::size(kColumns); ++c) {
      cells.push_back(HumanValue(FieldOf(kColumns[c]), r.metrics));
      if (c == 0) cells.push_back(speedup);
    }
    if (!perturbed.empty()) {
      for (const auto column : kPerturbColumns)
        cells.push_back(HumanValue(FieldOf(column), r.metrics));
    }
    if (dtypes_differ) cells.push_back(r.out_dtype);
    cells.push_back(DataCell(r, p));
    if (specs_differ) cells.push_back(r.specs);
    table.AddRow(std::move(cells));
    if (!r.completed) table.AddNote(r.error);
    if (r.completed && r.functional() && !r.correct()) table.AddNote(r.mismatch);
    if (p.failed) table.AddNote("with " + p.failed_on.Describe() + " slow: " + p.detail);
  }
  table.Print(std::cout);
}

nlohmann::ordered_json Json(const std::vector<KernelRunReport>& rows) {
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    auto j = row.ToJson();
    j["speedup"] = Speedup(row, rows.front());
    json.push_back(j);
  }
  return json;
}

void CheckPerturbOptions(const boost::program_options::variables_map& vm,
                         const PerturbOptions& perturb) {
  if (vm.count("perturb") && perturb.runs < 1) {
    throw UsageError("compare", "--perturb is " + std::to_string(perturb.runs) +
                                    "; give how many perturbed runs of each entry to make, 1 "
                                    "or more (e.g. --perturb 5).");
  }
  if (!(perturb.factor > 0) || !std::isfinite(perturb.factor)) {
    std::string message = "--perturb-factor is ";
    message += base::NumberText(perturb.factor);
    message +=
        "; give how many times slower the perturbed chip (or link) runs, a finite number "
        "greater than 0 (e.g. 2).";
    throw UsageError("compare", message);
  }
  if (!vm.count("perturb") && (!vm["perturb-factor"].defaulted() ||
                               !vm["perturb-seed"].defaulted() || vm.count("perturb-links"))) {
    throw UsageError("compare",
                     "--perturb-factor, --perturb-seed and --perturb-links shape the runs of "
                     "--perturb N; add --perturb N, or leave them out.");
  }
}

}  // namespace

int RunCompare(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string trace_dir;
  po::options_description options(
      "tpusim compare ENTRY... --topology T [--PARAMETER VALUE]... [options]\n\n"
      "Runs each kernel or program on identical global inputs (input i of a shape and dtype\n"
      "is the same for every entry with the same seed), checks\n"
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
      Definitions() + "\noptions");
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  const ParamFlags params;
  PerturbOptions perturb;
  options.add_options()("trace-dir", po::value(&trace_dir),
                        "write DIR/ENTRY.pftrace for each entry ('/' in a name becomes '_'); "
                        "the track layouts match, so two traces open side by side")(
      "json", "end the output with the rows as one JSON array on the last line")(
      "perturb", po::value(&perturb.runs),
      "rerun each entry N times, each with one random chip slowed (as --slow-chip), and show "
      "the median and worst slowdown against the unperturbed run")(
      "perturb-factor", po::value(&perturb.factor)->default_value(perturb.factor),
      "how much slower --perturb's chip is")(
      "perturb-seed", po::value(&perturb.seed)->default_value(perturb.seed),
      "the seed --perturb draws its chips from; the same seed slows the same chips")(
      "perturb-links",
      "slow one random link direction in each --perturb run (as --slow-link: its bandwidth) "
      "instead of a chip; the seed draws the links");
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
  perturb.links = vm.count("perturb-links") > 0;
  CheckPerturbOptions(vm, perturb);
  const std::vector<Straggler> stragglers = PerturbedStragglers(perturb, request.topology);
  if (perturb.runs > 0 && stragglers.empty()) {
    std::string message = "--perturb-links finds no link to slow: ";
    message += request.topology.name();
    message += " has no ICI link between chips; drop --perturb-links to slow chips instead.";
    throw UsageError("compare", message);
  }

  // Refuse before running anything when the entries do not compute the same thing.
  const Contract first =
      CheckSameComputation(infos, dsl::Mesh(request.topology), given, request.config.functional);
  if (ParseOnly()) return 0;
  if (!trace_dir.empty()) PrepareTraceDirectory("compare", trace_dir);

  std::vector<KernelRunReport> rows;
  std::vector<PerturbOutcome> perturbed;
  for (const auto& name : entries) {
    request.kernel = name;
    std::string file = name;
    std::replace(file.begin(), file.end(), '/', '_');
    request.trace_path = trace_dir.empty() ? "" : trace_dir + "/" + file + ".pftrace";
    if (isatty(2)) std::cerr << "\rrunning " << name << "..." << std::flush;
    rows.push_back(RunKernel(request));
    if (perturb.runs == 0) continue;
    if (isatty(2)) std::cerr << "\rperturbing " << name << "..." << std::flush;
    perturbed.push_back(rows.back().completed
                            ? Perturb(request, stragglers, perturb.factor, rows.back())
                            : PerturbOutcome{});
  }
  if (isatty(2)) std::cerr << "\r\033[K";
  if (perturb.runs > 0) {
    const char* what = perturb.links ? "link" : "chip";
    std::printf("--perturb: %d runs of each entry, one %s %sx slower in each (%ss", perturb.runs,
                what, base::NumberText(perturb.factor).c_str(), what);
    for (const Straggler& s : stragglers)
      std::printf(" %s", s.Name().c_str());
    std::printf(", seed %llu)\n", static_cast<unsigned long long>(perturb.seed));
  }
  PrintTable(first, rows, perturbed);
  bool all_ok = true;
  for (const auto& row : rows)
    all_ok = all_ok && row.ok();
  for (const auto& p : perturbed)
    all_ok = all_ok && !p.failed;
  if (!trace_dir.empty()) {
    std::cout << "traces in " << trace_dir
              << "/ (open them side by side at https://ui.perfetto.dev)\n";
  }
  if (vm.count("json")) std::cout << Json(rows).dump() << std::endl;
  return all_ok ? 0 : 1;
}

}  // namespace tpusim::cli
