// tpusim bench ENTRY...: a sweep of one problem parameter (bytes, m, k or n) in the style of
// nccl-tests, one row per size, each judged against the kernel's analytic bound, with the
// simulator's own speed beside it.

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "base/errors.h"
#include "base/text.h"
#include "dsl/mesh.h"
#include "tools/tpusim/bench_rows.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/run_memory.h"
#include "tools/tpusim/sweep_axis.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

constexpr const char* kHelp =
    R"(tpusim bench ENTRY... --topology T --sweep PARAM=FROM:TO[:xF] [options]
tpusim bench KERNEL --topology T --min-bytes B --max-bytes E [--factor F] [options]

Runs each ENTRY (a kernel or a program; a family name stands for its members) once per
value of one parameter and prints one row per value (and entry), as nccl-tests does.
--sweep is written as sweep's --param: PARAM=FROM:TO[:xF] or PARAM=V1,V2,..., with PARAM
an int or bytes parameter that every entry declares, e.g. bytes (V, the full, gathered
array, as in docs/references.md §3), m (the batch size of programs; the rows of
matmuls), k, n or a kernel's own such as chunk_bytes; the values are FROM, FROM*F,
FROM*F^2, ... up to TO (F: an integer of at least 2, default 2). FROM and TO take K, M, G
suffixes (powers of 1024). The other parameters stay as their flags give them (`tpusim
bench ENTRY --help` lists them). --min-bytes B --max-bytes E --factor F is the same as
--sweep bytes=B:E:xF. `tpusim sweep` runs products of several parameters.
  size        the swept value (bytes, or the swept parameter)
  time        simulated time (the last chip to finish)
  algbw       V / time
  busbw       algbw x the kernel's bus factor ((X-1)/X for all-gather)
              (both "-" for entries not sized by V: matmuls and programs; ICI/chip
              says what they moved)
  bound       the kernel's analytic bound (docs/references.md §3); its formula is in the header
  %bound      bound / time: 100% means the kernel reaches the bound
  ICI/chip    bytes each chip's ICI links carried, mean over chips (MiB)
  peak HBM    peak HBM per chip, max over chips (MiB)
  data        ok, WRONG, or - (timing-only: not checked)
  wall        host seconds the simulation took; events: model events; Mev/s: their rate
  RSS         peak resident memory of the run, MiB
The last line sums up: average bus bandwidth, min/max % of bound, total wall time.
While it runs, a progress bar is shown on stderr when stderr is a terminal. --plot
FILE.svg|.png draws busbw against the swept value (time for entries without a busbw),
one line per entry and the busbw its analytic bound allows dashed, as nccl-tests users
plot it (needs gnuplot).

Values are never rounded. Since F is an integer, every byte size in the sweep divides
into shards when FROM does, so a FROM that does not split into whole elements per shard
is an error naming the nearest sizes that do. A larger value an entry rejects for
another reason is skipped with a note. Each row runs in a child process (`tpusim run`),
so rows do not share memory and RSS is per row. --max-wall and --max-rss turn the simulator's own speed
targets into a check: a row whose run (set-up, simulation and check, in its child
process) takes longer, or peaks higher, fails. Exits 0 when every row completed (and, in
functional mode, matched the host reference) within those budgets, 1 otherwise, 2 for
bad arguments.

options)";

// The swept parameter and its values, from --sweep or --min-bytes/--max-bytes/--factor.
struct BenchSweep {
  std::string param = "bytes";
  std::vector<uint64_t> values;
  std::string first_flag;  // where the first value comes from, for an error about it
};

// `sweepable`: whether some entry declares an int or bytes parameter. One that declares
// none (an HLO module) runs once, as given, when no sweep is asked for.
BenchSweep ParseBenchSweep(const std::string& sweep_text, const std::string& min_text,
                           const std::string& max_text, int64_t factor, bool sweepable) {
  BenchSweep sweep;
  if (!sweepable && sweep_text.empty() && min_text.empty() && max_text.empty()) {
    sweep.param.clear();
    sweep.values = {0};
    return sweep;
  }
  if (!sweep_text.empty()) {
    if (!min_text.empty() || !max_text.empty())
      throw UsageError("bench", "give either --sweep or --min-bytes/--max-bytes, not both.");
    const SweepAxis axis = ParseSweepAxis("bench", "--sweep", sweep_text);
    sweep.param = axis.name;
    for (const std::string& value : axis.values)
      sweep.values.push_back(ParseBytes("bench", "--sweep " + axis.name, value));
    sweep.first_flag = "--sweep " + axis.name + "=" + (axis.range ? "FROM" : axis.values[0]);
    return sweep;
  }
  if (min_text.empty() && max_text.empty()) {
    throw UsageError("bench",
                     "give the sweep: --sweep m=256:16384:x2 (an int or bytes parameter), or "
                     "--min-bytes B --max-bytes E.");
  }
  if (min_text.empty()) throw UsageError("bench", "--min-bytes is required, e.g. --min-bytes 1K.");
  if (max_text.empty()) throw UsageError("bench", "--max-bytes is required, e.g. --max-bytes 1G.");
  const uint64_t from = ParseBytes("bench", "--min-bytes", min_text);
  const uint64_t to = ParseBytes("bench", "--max-bytes", max_text);
  if (from == 0) throw UsageError("bench", "--min-bytes must be at least 1 byte.");
  if (from > to) {
    throw UsageError("bench", "--min-bytes " + min_text + " is above --max-bytes " + max_text +
                                  "; the sweep runs from the smaller to the larger size.");
  }
  if (factor < 2) {
    throw UsageError("bench", "--factor " + std::to_string(factor) +
                                  " must be an integer of at least 2 (each size is the "
                                  "previous one times the factor).");
  }
  for (uint64_t v = from; v <= to; v *= static_cast<uint64_t>(factor)) {
    sweep.values.push_back(v);
    if (v > to / static_cast<uint64_t>(factor)) break;
  }
  sweep.first_flag = "--min-bytes";
  return sweep;
}

// Bench sweeps numbers: a parameter it can sweep is an int or a byte size.
bool Sweepable(const kernels::Param& param) {
  return param.type() == kernels::ParamType::kInt || param.type() == kernels::ParamType::kBytes;
}

// Throws UsageError unless every entry declares the swept parameter as an int or bytes.
void CheckSweptParam(const BenchSweep& sweep,
                     const std::vector<const kernels::KernelInfo*>& entries) {
  if (sweep.param.empty()) return;  // one point: nothing is swept
  for (const auto* entry : entries) {
    const kernels::Param* param = entry->FindParam(sweep.param);
    if (param && Sweepable(*param)) continue;
    throw UsageError("bench",
                     "--sweep cannot sweep '" + sweep.param + "': " + entry->name +
                         (param ? "'s parameter '" + sweep.param + "' is " +
                                      kernels::ParamTypeName(param->type()) + ", not int or bytes"
                                : " takes no parameter '" + sweep.param + "'") +
                         "; write PARAM=FROM:TO[:xF] with an int or bytes parameter "
                         "of every entry (`tpusim bench ENTRY --help` lists them).");
  }
}

}  // namespace

int RunBench(int argc, char** argv) {
  // A matmul sweeps block sizes, unless a sweep of its parameters is asked for.
  const bool swept = std::any_of(argv, argv + argc, [](const char* arg) {
    const std::string a = arg;
    return a.rfind("--sweep", 0) == 0 || a.rfind("--min-bytes", 0) == 0 ||
           a.rfind("--max-bytes", 0) == 0;
  });
  for (int i = 1; i < argc && !swept; ++i) {
    if (argv[i][0] != '-') {
      if (std::string(argv[i]) == "matmul") return RunBenchMatmul(argc, argv);
      break;
    }
  }
  namespace po = boost::program_options;
  std::string sweep_text, min_text, max_text, csv, plot;
  int64_t factor = 2;
  double max_wall = 0, max_rss = 0;
  po::options_description options(kHelp);
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  const ParamFlags params;
  options.add_options()("sweep", po::value(&sweep_text),
                        "PARAM=FROM:TO[:xF] or PARAM=V1,V2,...: sweep an int or bytes "
                        "parameter, e.g. m=256:16384:x2")(
      "min-bytes", po::value(&min_text), "same as --sweep bytes=B:E:xF: the smallest V")(
      "max-bytes,e", po::value(&max_text), "largest V (the sweep stops at or below it)")(
      "factor,f", po::value(&factor)->default_value(2),
      "integer growth factor between byte sizes, >= 2")("csv", po::value(&csv),
                                                        "also write the rows to this CSV file")(
      "plot", po::value(&plot), "also draw busbw against the swept value into this .svg or .png")(
      "max-wall", po::value(&max_wall),
      "fail a row whose run takes more than this many host seconds")(
      "max-rss", po::value(&max_rss), "fail a row whose run peaks above this many MiB")(
      "json", "end the output with the rows as one JSON array on the last line");
  std::vector<std::string> names;
  po::variables_map vm;
  if (!ParseCommandLine("bench", argc, argv, options, -1, names, vm, params)) return 0;
  if (names.empty())
    throw UsageError("bench", "name the kernel to run, e.g. tpusim bench all_gather_bidi.");
  const std::vector<const kernels::KernelInfo*> infos = EntriesNamed("bench", names);
  std::vector<std::string> entries;
  for (const auto* info : infos)
    entries.push_back(info->name);
  const kernels::ParamValues given = params.Given("bench", vm, infos);
  if (!vm.count("topology"))
    throw UsageError("bench", "--topology is required, e.g. --topology v5e-16x16.");
  const bool sweepable =
      std::any_of(infos.begin(), infos.end(), [](const kernels::KernelInfo* info) {
        return std::any_of(info->params.begin(), info->params.end(), Sweepable);
      });
  const BenchSweep sweep = ParseBenchSweep(sweep_text, min_text, max_text, factor, sweepable);
  const bool single = sweep.param.empty();
  CheckSweptParam(sweep, infos);
  if (given.count(sweep.param)) {
    std::string message = FlagOf(sweep.param);
    message += " and ";
    message += sweep_text.empty() ? "--min-bytes" : "--sweep";
    message += " both set '";
    message += sweep.param;
    message += "'; drop ";
    message += FlagOf(sweep.param);
    message += ", since the sweep gives every value.";
    throw UsageError("bench", message);
  }
  if (vm.count("max-wall") && !(max_wall > 0))
    throw UsageError("bench", "--max-wall must be a positive number of seconds.");
  if (vm.count("max-rss") && !(max_rss > 0))
    throw UsageError("bench", "--max-rss must be a positive number of MiB.");
  if (!plot.empty() && single) {
    throw UsageError("bench",
                     "--plot draws against a swept parameter, and there is none: give "
                     "--sweep PARAM=..., or use tpusim sweep over topologies.");
  }
  if (!plot.empty()) CheckPlotFile("bench", plot);

  const KernelRunRequest base = common.Request("bench", vm);
  const dsl::Mesh mesh(base.topology);
  BenchLayout layout;
  layout.param = sweep.param;
  if (entries.size() > 1) {
    for (const auto& name : entries)
      layout.entry_width = std::max(layout.entry_width, static_cast<int>(name.size()) + 1);
  }

  // The sweep, checked before anything runs: the first value must be one every entry
  // takes (an error that names the nearest valid sizes); a later one an entry rejects is
  // skipped with a note.
  struct Planned {
    size_t entry;
    uint64_t value;
  };
  std::vector<Planned> plan;
  std::vector<std::string> notes;
  std::vector<kernels::Bound> bounds(entries.size());
  std::optional<kernels::Params> first_params;
  for (const uint64_t v : sweep.values) {
    for (size_t e = 0; e < entries.size(); ++e) {
      kernels::ParamValues values = given;
      if (!single) values.insert_or_assign(sweep.param, kernels::ParamValue(v));
      try {
        kernels::Params bound = infos[e]->Bind(values);
        // Placeholders check the shapes and BlockSpecs without making data, and tell
        // whether a functional run would fit.
        const kernels::Workload shapes = ShapesOnlyWorkload(*infos[e], mesh, bound);
        if (base.config.functional && !ParseOnly()) {
          try {
            RequireRunMemory(shapes, /*built=*/false);
          } catch (const Error& error) {
            throw Error(error.kind(),
                        "at " + sweep.param + " " + std::to_string(v) + ", " + error.what());
          }
        }
        bound.functional = false;
        bounds[e] = infos[e]->BoundOf(mesh, bound);
        if (!first_params) first_params = bound;
        plan.push_back({e, v});
      } catch (const Error& error) {
        if (error.kind() != ErrorKind::kInvalidArgument) throw;
        const auto* param_error = dynamic_cast<const kernels::ParamError*>(&error);
        const bool swept_param =
            param_error &&
            std::count(param_error->params().begin(), param_error->params().end(), sweep.param) > 0;
        if (v == sweep.values.front() || (param_error && !swept_param)) {
          if (!param_error) throw;
          throw UsageError("bench", std::string(error.what()) +
                                        (swept_param ? " (flag " + sweep.first_flag + ")"
                                                     : FlagsNote(param_error->params())));
        }
        notes.push_back("skipped " + entries[e] + " at " + sweep.param + " " + std::to_string(v) +
                        ": " + error.what());
      }
    }
  }
  if (ParseOnly()) return 0;

  std::string problem;
  if (first_params && first_params->TypeOf("axis") == kernels::ParamType::kString) {
    const std::string& axis = first_params->String("axis");
    const int axis_index = mesh.AxisIndex(axis);
    problem += ", axis '" + axis + "' of " + std::to_string(mesh.shape()[axis_index]) +
               (base.topology.mesh().wraparound(axis_index) ? " with" : " without") + " wraparound";
  }
  if (first_params && first_params->TypeOf("dtype") == kernels::ParamType::kEnum)
    problem += ", " + first_params->String("dtype");
  const std::string title =
      "tpusim bench " +
      (entries.size() == 1 ? entries[0] : "of " + std::to_string(entries.size()) + " entries") +
      " on " + base.topology.name() + " (" +
      SizeText(topologies::ChipCount(base.topology), topologies::DeviceCount(base.topology)) + ")" +
      problem;
  std::cout << "# " << title << (base.config.functional ? ", data checked" : ", timing only")
            << (single ? ", one run of each entry" : ", sweeping " + sweep.param) << "\n";
  for (size_t e = 0; e < entries.size(); ++e) {
    std::cout << "# bound" << (entries.size() > 1 ? " of " + entries[e] : "") << ": "
              << (bounds[e].formula.empty() ? "none given" : bounds[e].formula)
              << (infos[e]->kind == kernels::EntryKind::kKernel ? " (docs/references.md §3)" : "")
              << "\n";
  }
  for (const auto& note : notes)
    std::cout << "# " << note << "\n";
  PrintBenchHeader(std::cout, layout);
  std::cout.flush();

  std::ofstream csv_file;
  if (!csv.empty()) {
    csv_file.open(csv);
    if (!csv_file) throw UsageError("bench", "cannot write the CSV file '" + csv + "'.");
    csv_file << BenchCsvHeader(layout) << "\n";
  }
  // Each row is `tpusim run` in a child process, one at a time so that wall times are
  // the run's own.
  std::vector<std::string> fixed = common.RunFlags(vm);
  fixed.insert(fixed.begin(), "--topology=" + common.topology());
  if (vm.count("slices"))
    fixed.push_back("--slices=" + std::to_string(vm["slices"].as<uint32_t>()));
  for (const auto& [name, value] : given)
    fixed.push_back(FlagOf(name) + "=" + value.ToString());
  std::vector<std::vector<std::string>> commands;
  for (const Planned& planned : plan) {
    std::vector<std::string> command = {"run", entries[planned.entry]};
    command.insert(command.end(), fixed.begin(), fixed.end());
    if (!single) command.push_back(FlagOf(sweep.param) + "=" + std::to_string(planned.value));
    command.push_back("--json");
    commands.push_back(std::move(command));
  }
  std::vector<BenchRow> rows(plan.size());
  const auto started = std::chrono::steady_clock::now();
  const PointRunner runner(1, isatty(STDERR_FILENO) != 0);
  runner.Run(commands, [&](size_t i, const PointOutcome& outcome) {
    BenchRow& row = rows[i];
    row.entry = entries[plan[i].entry];
    row.value = plan[i].value;
    row.outcome = outcome;
    row.problem = outcome.error;
    const double seconds = outcome.metrics.process_seconds.value_or(0);
    const double rss_mib = outcome.metrics.peak_rss_bytes.value_or(0) / (1 << 20);
    if (max_wall > 0 && seconds > max_wall) {
      row.over_budget = true;
      base::AppendListItem(
          row.problem, "; ",
          FormatNumber("took %.3f s", seconds) + FormatNumber(", over --max-wall %g s", max_wall));
    }
    if (max_rss > 0 && rss_mib > max_rss) {
      row.over_budget = true;
      base::AppendListItem(row.problem, "; ",
                           FormatNumber("peaked at %.1f MiB", rss_mib) +
                               FormatNumber(", over --max-rss %g MiB", max_rss));
    }
    PrintBenchRow(std::cout, row, layout);
    if (!row.problem.empty()) {
      const std::string label = single ? std::string("run")
                                : sweep.param == "bytes"
                                    ? HumanBytes(row.value)
                                    : sweep.param + "=" + std::to_string(row.value);
      std::cout << "#   " << row.entry << " " << label << ": " << row.problem << "\n";
    }
    std::cout.flush();
    if (csv_file.is_open()) csv_file << BenchCsvRow(row, layout) << "\n";
  });
  if (csv_file.is_open()) RequireWritten(csv_file, "the CSV file '" + csv + "'");
  const double total_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << BenchSummary(rows, entries.size(), total_wall) << "\n";
  if (vm.count("json")) std::cout << BenchJson(rows, layout).dump() << std::endl;
  if (!plot.empty()) {
    DrawPlot(BenchPlot(rows, layout, title), plot);
    std::cerr << "tpusim bench: plotted " << plot << "\n";
  }
  const bool all_ok =
      std::all_of(rows.begin(), rows.end(), [](const BenchRow& row) { return row.ok(); });
  return all_ok ? 0 : 1;
}

}  // namespace tpusim::cli
