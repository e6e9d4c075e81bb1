// tpusim bench ENTRY...: a sweep of one problem parameter (bytes, m, k or n) in the style of
// nccl-tests, one row per size, each judged against the kernel's analytic bound, with the
// simulator's own speed beside it.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/errors.h"
#include "base/text.h"
#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/run_memory.h"
#include "tools/tpusim/sweep.h"

namespace tpusim::cli {

namespace {

constexpr const char* kHelp =
    R"(tpusim bench ENTRY... --topology T --sweep PARAM=FROM:TO[:xF] [options]
tpusim bench KERNEL --topology T --min-bytes B --max-bytes E [--factor F] [options]

Runs each ENTRY (a kernel or a program; a family name stands for its members) once per
value of one parameter and prints one row per value (and entry), as nccl-tests does.
Every sweep has one spelling, --sweep PARAM=FROM:TO[:xF]: PARAM is an int or bytes
parameter that every entry declares, e.g. bytes (V, the full, gathered array, as in
docs/references.md §3), m (the batch size of programs; the rows of matmuls), k, n or a
kernel's own such as chunk_bytes; the values are FROM, FROM*F, FROM*F^2, ... up to TO (F:
an integer of at least 2, default 2). FROM and TO take K, M, G suffixes (powers of 1024).
The other parameters stay as their flags give them (`tpusim bench ENTRY --help` lists
them). --min-bytes B --max-bytes E --factor F is the same as --sweep bytes=B:E:xF.
  size        the swept value (bytes, or the swept parameter)
  time        simulated time (the last chip to finish)
  algbw       V / time
  busbw       algbw x the kernel's bus factor ((X-1)/X for all-gather)
              (both "-" for entries not sized by V: matmuls and programs; ICI/chip
              says what they moved)
  bound       the kernel's analytic bound (docs/references.md §3); its formula is in the header
  %bound      bound / time: 100% means the kernel reaches the bound
  ICI/chip    bytes each chip's ICI links carried, mean over chips (MiB)
  HBM         peak HBM per chip, max over chips (MiB)
  data        ok, WRONG, or - (timing-only: not checked)
  wall        host seconds the simulation took; events: model events; Mev/s: their rate
  RSS         peak resident memory of the run, MiB
The last line sums up: average bus bandwidth, min/max % of bound, total wall time.
While it runs, a progress line is shown on stderr when stderr is a terminal.

Values are never rounded. Since F is an integer, every byte size in the sweep divides
into shards when FROM does, so a FROM that does not split into whole elements per shard
is an error naming the nearest sizes that do. A larger value an entry rejects for
another reason is skipped with a note. Each row runs in a child process, so rows do not
share memory and RSS is per row. --max-wall and --max-rss turn the simulator's own speed
targets into a check: a row whose run (set-up, simulation and check, in its child
process) takes longer, or peaks higher, fails. Exits 0 when every row completed (and, in
functional mode, matched the host reference) within those budgets, 1 otherwise, 2 for
bad arguments.

options)";

struct Row {
  std::string entry;
  uint64_t value = 0;  // the swept parameter's value
  bool ran = false;    // false: the child died or the run threw; `problem` says why
  std::string problem;
  nlohmann::ordered_json report;  // KernelRunReport::ToJson()
  double rss_mib = 0;
  double process_seconds = 0;  // the child's whole life: set-up, run, check
  bool over_budget = false;    // slower or bigger than --max-wall / --max-rss

  bool completed() const { return ran && report.value("completed", false); }
  // true / false when the data was checked, null for timing-only runs.
  nlohmann::ordered_json correct() const {
    const auto it = report.find("correct");
    return it == report.end() ? nlohmann::ordered_json() : *it;
  }
  bool ok() const {
    return completed() && !over_budget && (correct().is_null() || correct().get<bool>());
  }
  double Number(const char* key) const {
    return ran && report.contains(key) && report[key].is_number() ? report[key].get<double>() : 0;
  }
  // algbw and busbw: null in the report of an entry that is not a V-byte collective.
  bool Has(const char* key) const { return ran && report.contains(key) && report[key].is_number(); }
};

// Runs one size in a child process and reads its report back through a pipe.
Row RunInChild(const KernelRunRequest& request, uint64_t value) {
  Row row;
  row.entry = request.kernel;
  row.value = value;
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("bench: cannot create a pipe");
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const auto started = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("bench: cannot fork a child process");
  if (child == 0) {
    close(fds[0]);
    nlohmann::ordered_json out;
    try {
      out["report"] = RunKernel(request).ToJson();
    } catch (const std::exception& e) {
      out["problem"] = e.what();
    }
    const std::string text = out.dump();
    size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = write(fds[1], text.data() + written, text.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);  // no atexit handlers or stream flushes of the parent's state
  }
  close(fds[1]);
  std::string text;
  char buffer[65536];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  row.process_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  row.rss_mib = static_cast<double>(usage.ru_maxrss) / 1024;  // ru_maxrss is in KiB
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    row.problem = WIFSIGNALED(status)
                      ? "the run died with signal " + std::to_string(WTERMSIG(status))
                      : "the run exited with status " + std::to_string(WEXITSTATUS(status));
    return row;
  }
  const auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() ||
      !(parsed.contains("problem") || parsed.contains("report"))) {
    row.problem = "the run returned no report";
  } else if (parsed.contains("problem")) {
    row.problem = parsed["problem"].get<std::string>();
  } else {
    row.report = parsed["report"];
    row.ran = true;
    if (!row.ok()) {
      row.problem = row.report.contains("error")      ? row.report["error"].get<std::string>()
                    : row.report.contains("mismatch") ? row.report["mismatch"].get<std::string>()
                                                      : "the run did not complete";
    }
  }
  return row;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// A bandwidth column: `none` where the entry has no such bandwidth.
std::string Bandwidth(const Row& row, const char* key, const char* format, const char* none) {
  return row.Has(key) || !row.ran ? Format(format, row.Number(key)) : none;
}

std::string DataColumn(const Row& row) {
  if (!row.completed()) return "FAILED";
  if (row.correct().is_null()) return "-";
  return row.correct().get<bool>() ? "ok" : "WRONG";
}

void PrintRow(std::ostream& out, const Row& row, const Sweep& sweep) {
  const double time_us = row.Number("sim_time_ns") / 1e3;
  const double bound_us = row.Number("analytic_ns") / 1e3;
  const double wall = row.Number("wall_seconds");
  const double events = row.Number("events");
  char line[320];
  std::snprintf(line, sizeof line,
                "%-*s%14llu %12.3f %9s %9s %12.3f %7.1f %9.2f %9.2f %6s %8.3f %10.0f %7.2f "
                "%8.1f",
                sweep.entry_width, sweep.entry_width ? row.entry.c_str() : "",
                static_cast<unsigned long long>(row.value), time_us,
                Bandwidth(row, "algbw_gbps", "%.2f", "-").c_str(),
                Bandwidth(row, "busbw_gbps", "%.2f", "-").c_str(), bound_us,
                row.Number("percent_of_bound"), row.Number("ici_bytes_per_chip") / (1 << 20),
                row.Number("peak_hbm_bytes") / (1 << 20), DataColumn(row).c_str(), wall, events,
                wall > 0 ? events / wall / 1e6 : 0, row.rss_mib);
  out << line << "\n";
}

constexpr const char* kCsvColumns =
    ",sim_time_us,algbw_gbps,busbw_gbps,bound_us,percent_of_bound,ici_bytes_per_chip,"
    "peak_hbm_bytes,data,wall_seconds,events,events_per_second,peak_rss_mib";

void CsvRow(std::ostream& out, const Row& row, const Sweep& sweep) {
  const double wall = row.Number("wall_seconds");
  const double events = row.Number("events");
  if (sweep.entry_width) out << row.entry << ",";
  out << row.value << "," << Format("%.6f", row.Number("sim_time_ns") / 1e3) << ","
      << Bandwidth(row, "algbw_gbps", "%.4f", "") << "," << Bandwidth(row, "busbw_gbps", "%.4f", "")
      << "," << Format("%.6f", row.Number("analytic_ns") / 1e3) << ","
      << Format("%.3f", row.Number("percent_of_bound")) << ","
      << Format("%.0f", row.Number("ici_bytes_per_chip")) << ","
      << Format("%.0f", row.Number("peak_hbm_bytes")) << "," << DataColumn(row) << ","
      << Format("%.6f", wall) << "," << static_cast<uint64_t>(events) << ","
      << Format("%.0f", wall > 0 ? events / wall : 0) << "," << Format("%.1f", row.rss_mib) << "\n";
}

}  // namespace

int RunBench(int argc, char** argv) {
  // A matmul sweeps block sizes, not bytes.
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') {
      if (std::string(argv[i]) == "matmul") return RunBenchMatmul(argc, argv);
      break;
    }
  }
  namespace po = boost::program_options;
  std::string sweep_text, min_text, max_text, csv;
  int64_t factor = 2;
  double max_wall = 0, max_rss = 0;
  po::options_description options(kHelp);
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  const ParamFlags params;
  options.add_options()("sweep", po::value(&sweep_text),
                        "PARAM=FROM:TO[:xF]: sweep an int or bytes parameter, e.g. m=256:16384:x2")(
      "min-bytes", po::value(&min_text), "same as --sweep bytes=B:E:xF: the smallest V")(
      "max-bytes,e", po::value(&max_text), "largest V (the sweep stops at or below it)")(
      "factor,f", po::value(&factor)->default_value(2),
      "integer growth factor between byte sizes, >= 2")("csv", po::value(&csv),
                                                        "also write the rows to this CSV file")(
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
  Sweep sweep;
  if (!sweep_text.empty()) {
    if (!min_text.empty() || !max_text.empty())
      throw UsageError("bench", "give either --sweep or --min-bytes/--max-bytes, not both.");
    sweep = ParseSweep(sweep_text);
    CheckSweep(sweep, "--sweep " + sweep.param + " FROM", "TO", "--sweep's factor");
  } else {
    if (min_text.empty() && max_text.empty()) {
      throw UsageError("bench",
                       "give the sweep: --sweep m=256:16384:x2 (an int or bytes parameter), or "
                       "--min-bytes B --max-bytes E.");
    }
    if (min_text.empty())
      throw UsageError("bench", "--min-bytes is required, e.g. --min-bytes 1K.");
    if (max_text.empty())
      throw UsageError("bench", "--max-bytes is required, e.g. --max-bytes 1G.");
    sweep.from = ParseBytes("bench", "--min-bytes", min_text);
    sweep.to = ParseBytes("bench", "--max-bytes", max_text);
    sweep.factor = factor < 2 ? 0 : static_cast<uint64_t>(factor);
    if (sweep.from == 0) throw UsageError("bench", "--min-bytes must be at least 1 byte.");
    if (sweep.from > sweep.to) {
      throw UsageError("bench", "--min-bytes " + min_text + " is above --max-bytes " + max_text +
                                    "; the sweep runs from the smaller to the larger size.");
    }
    if (factor < 2) {
      throw UsageError("bench", "--factor " + std::to_string(factor) +
                                    " must be an integer of at least 2 (each size is the "
                                    "previous one times the factor).");
    }
  }
  CheckSweptParam(sweep, infos);
  if (vm.count("max-wall") && !(max_wall > 0))
    throw UsageError("bench", "--max-wall must be a positive number of seconds.");
  if (vm.count("max-rss") && !(max_rss > 0))
    throw UsageError("bench", "--max-rss must be a positive number of MiB.");

  KernelRunRequest base = common.Request("bench", vm);
  base.params = given;
  const dsl::Mesh mesh(base.topology);
  if (entries.size() > 1) {
    for (const auto& name : entries)
      sweep.entry_width = std::max(sweep.entry_width, static_cast<int>(name.size()) + 1);
  }
  // Where the swept value comes from, for an error about it.
  const std::string sweep_flag =
      sweep_text.empty() ? "--min-bytes" : "--sweep " + sweep.param + "=FROM";

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
  for (const uint64_t v : sweep.Values()) {
    for (size_t e = 0; e < entries.size(); ++e) {
      kernels::ParamValues values = given;
      values.insert_or_assign(sweep.param, kernels::ParamValue(v));
      try {
        kernels::Params bound = infos[e]->Bind(values);
        // Placeholders check the shapes and BlockSpecs without making data, and tell
        // whether a functional run would fit.
        const kernels::Workload shapes = ShapesOnlyWorkload(*infos[e], mesh, bound);
        if (base.functional && !ParseOnly()) {
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
        const bool swept = param_error && std::count(param_error->params().begin(),
                                                     param_error->params().end(), sweep.param) > 0;
        if (v == sweep.from || (param_error && !swept)) {
          if (!param_error) throw;
          throw UsageError("bench",
                           std::string(error.what()) + (swept ? " (flag " + sweep_flag + ")"
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
  std::cout << "# tpusim bench "
            << (entries.size() == 1 ? entries[0]
                                    : "of " + std::to_string(entries.size()) + " entries")
            << " on " << base.topology.name() << " (" << mesh.devices() << " chips)" << problem
            << (base.functional ? ", data checked" : ", timing only") << ", sweeping "
            << sweep.param << "\n";
  for (size_t e = 0; e < entries.size(); ++e) {
    std::cout << "# bound" << (entries.size() > 1 ? " of " + entries[e] : "") << ": "
              << (bounds[e].formula.empty() ? "none given" : bounds[e].formula)
              << (infos[e]->kind == kernels::EntryKind::kKernel ? " (docs/references.md §3)" : "")
              << "\n";
  }
  for (const auto& note : notes)
    std::cout << "# " << note << "\n";
  const std::string entry_column(static_cast<size_t>(sweep.entry_width), ' ');
  std::string entry_title = "entry";
  entry_title.resize(entry_column.size(), ' ');
  std::printf("#\n# %s%12s %12s %9s %9s %12s %7s %9s %9s %6s %8s %10s %7s %8s\n",
              sweep.entry_width ? entry_title.c_str() : "",
              sweep.param == "bytes" ? "size" : sweep.param.c_str(), "time", "algbw", "busbw",
              "bound", "%bound", "ICI/chip", "HBM", "data", "wall", "events", "Mev/s", "RSS");
  std::printf("# %s%12s %12s %9s %9s %12s %7s %9s %9s %6s %8s %10s %7s %8s\n", entry_column.c_str(),
              sweep.param == "bytes" ? "(B)" : "", "(us)", "(GB/s)", "(GB/s)", "(us)", "%", "(MiB)",
              "(MiB)", "", "(s)", "", "", "(MiB)");
  std::fflush(stdout);

  std::ofstream csv_file;
  if (!csv.empty()) {
    csv_file.open(csv);
    if (!csv_file) throw UsageError("bench", "cannot write the CSV file '" + csv + "'.");
    csv_file << (sweep.entry_width ? "entry," : "") << sweep.param << kCsvColumns << "\n";
  }
  const bool progress = isatty(STDERR_FILENO);
  std::vector<Row> rows;
  const auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string& entry = entries[plan[i].entry];
    const std::string label = sweep.param == "bytes"
                                  ? HumanBytes(plan[i].value)
                                  : sweep.param + "=" + std::to_string(plan[i].value);
    if (progress) {
      std::cerr << "\r\033[K[" << i + 1 << "/" << plan.size() << "] " << entry << " " << label
                << " ..." << std::flush;
    }
    KernelRunRequest request = base;
    request.kernel = entry;
    request.params.insert_or_assign(sweep.param, kernels::ParamValue(plan[i].value));
    rows.push_back(RunInChild(request, plan[i].value));
    Row& row = rows.back();
    if (max_wall > 0 && row.process_seconds > max_wall) {
      row.over_budget = true;
      base::AppendListItem(
          row.problem, "; ",
          Format("took %.3f s", row.process_seconds) + Format(", over --max-wall %g s", max_wall));
    }
    if (max_rss > 0 && row.rss_mib > max_rss) {
      row.over_budget = true;
      base::AppendListItem(
          row.problem, "; ",
          Format("peaked at %.1f MiB", row.rss_mib) + Format(", over --max-rss %g MiB", max_rss));
    }
    if (progress) std::cerr << "\r\033[K" << std::flush;
    PrintRow(std::cout, row, sweep);
    if (!row.problem.empty())
      std::cout << "#   " << entry << " " << label << ": " << row.problem << "\n";
    std::cout.flush();
    if (csv_file.is_open()) CsvRow(csv_file, row, sweep);
  }
  if (csv_file.is_open()) RequireWritten(csv_file, "the CSV file '" + csv + "'");
  const double total_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  double busbw_sum = 0, min_pct = 0, max_pct = 0, events = 0, sim_wall = 0;
  int completed = 0, with_busbw = 0;
  bool all_ok = true;
  for (const Row& row : rows) {
    all_ok = all_ok && row.ok();
    if (!row.completed()) continue;
    const double pct = row.Number("percent_of_bound");
    min_pct = completed == 0 ? pct : std::min(min_pct, pct);
    max_pct = completed == 0 ? pct : std::max(max_pct, pct);
    busbw_sum += row.Number("busbw_gbps");
    with_busbw += row.Has("busbw_gbps");
    events += row.Number("events");
    sim_wall += row.Number("wall_seconds");
    ++completed;
  }
  char summary[320];
  std::snprintf(summary, sizeof summary,
                "# %d of %zu %s completed%s; avg bus bandwidth %s; %% of bound "
                "min %.1f%% max %.1f%%; wall %.3f s total (%.3f s simulating, %.2f M events/s)",
                completed, rows.size(), entries.size() > 1 ? "rows" : "sizes",
                all_ok ? "" : " (FAILURES above)",
                with_busbw ? Format("%.2f GB/s", busbw_sum / with_busbw).c_str() : "-", min_pct,
                max_pct, total_wall, sim_wall, sim_wall > 0 ? events / sim_wall / 1e6 : 0.0);
  std::cout << summary << "\n";
  if (vm.count("json")) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      nlohmann::ordered_json j =
          row.ran ? row.report : nlohmann::ordered_json{{"kernel", row.entry}};
      j[sweep.param] = row.value;
      j["peak_rss_mib"] = row.rss_mib;
      j["process_seconds"] = row.process_seconds;
      if (!row.problem.empty()) j["problem"] = row.problem;
      array.push_back(std::move(j));
    }
    std::cout << array.dump() << std::endl;
  }
  return all_ok ? 0 : 1;
}

}  // namespace tpusim::cli
