// tpusim bench KERNEL: a sweep of sizes in the style of nccl-tests, one row per size, each
// judged against the kernel's analytic bound, with the simulator's own speed beside it.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "dsl/dtype.h"
#include "dsl/mesh.h"
#include "sim/errors.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/kernel_run.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

constexpr const char* kHelp =
    R"(tpusim bench KERNEL --topology T --min-bytes B --max-bytes E [options]

Runs KERNEL once per size V = B, B*F, B*F^2, ... up to E (V is the full, gathered array
as in docs/references.md §3) and prints one row per size, as nccl-tests does:
  size        V in bytes
  time        simulated time (the last chip to finish)
  algbw       V / time
  busbw       algbw x the kernel's bus factor ((X-1)/X for all-gather)
  bound       the kernel's analytic bound (docs/references.md §3); its formula is in the header
  %bound      bound / time: 100% means the kernel reaches the bound
  data        ok, WRONG, or - (timing-only: not checked)
  wall        host seconds the simulation took; events: model events; Mev/s: their rate
  RSS         peak resident memory of the run, MiB
The last line sums up: average bus bandwidth, min/max % of bound, total wall time.
While it runs, a progress line is shown on stderr when stderr is a terminal.

Sizes are never rounded. Since F is an integer, every size in the sweep divides into
shards when B does, so a B that does not split into whole elements per shard is an error
naming the nearest sizes that do. A larger size the kernel rejects for another reason is
skipped with a note. Each size runs in a child process, so rows do not share memory and
RSS is per row. --max-wall and --max-rss turn the simulator's own speed targets into a
check: a row whose run (set-up, simulation and check, in its child process) takes longer,
or peaks higher, fails. Exits 0 when every row completed (and, in functional mode,
matched the host reference) within those budgets, 1 otherwise, 2 for bad arguments.

options)";

struct Row {
  uint64_t bytes = 0;
  bool ran = false;  // false: the child died or the run threw; `problem` says why
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
};

// Runs one size in a child process and reads its report back through a pipe.
Row RunInChild(const KernelRunRequest& request) {
  Row row;
  row.bytes = request.args.bytes;
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

std::string DataColumn(const Row& row) {
  if (!row.completed()) return "FAILED";
  if (row.correct().is_null()) return "-";
  return row.correct().get<bool>() ? "ok" : "WRONG";
}

void PrintRow(std::ostream& out, const Row& row) {
  const double time_us = row.Number("sim_time_ns") / 1e3;
  const double bound_us = row.Number("analytic_ns") / 1e3;
  const double wall = row.Number("wall_seconds");
  const double events = row.Number("events");
  char line[256];
  std::snprintf(
      line, sizeof line, "%14llu %12.3f %9.2f %9.2f %12.3f %7.1f %6s %8.3f %10.0f %7.2f %8.1f",
      static_cast<unsigned long long>(row.bytes), time_us, row.Number("algbw_gbps"),
      row.Number("busbw_gbps"), bound_us, row.Number("percent_of_bound"), DataColumn(row).c_str(),
      wall, events, wall > 0 ? events / wall / 1e6 : 0, row.rss_mib);
  out << line << "\n";
}

constexpr const char* kCsvHeader =
    "bytes,sim_time_us,algbw_gbps,busbw_gbps,bound_us,percent_of_bound,data,wall_seconds,"
    "events,events_per_second,peak_rss_mib";

void CsvRow(std::ostream& out, const Row& row) {
  const double wall = row.Number("wall_seconds");
  const double events = row.Number("events");
  out << row.bytes << "," << Format("%.6f", row.Number("sim_time_ns") / 1e3) << ","
      << Format("%.4f", row.Number("algbw_gbps")) << "," << Format("%.4f", row.Number("busbw_gbps"))
      << "," << Format("%.6f", row.Number("analytic_ns") / 1e3) << ","
      << Format("%.3f", row.Number("percent_of_bound")) << "," << DataColumn(row) << ","
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
  std::string kernel, topology, axis, min_text, max_text, dtype, csv;
  int64_t factor = 2;
  double time_limit_s = 60, max_wall = 0, max_rss = 0;
  po::options_description options(kHelp);
  options.add_options()("help,h", "show this help")(
      "topology,t", po::value(&topology),
      "preset name (see `tpusim topologies`) or .textproto path")(
      "axis,a", po::value(&axis)->default_value("x"), "mesh axis the collective runs over")(
      "min-bytes,b", po::value(&min_text), "smallest V: 4096, 64K, 16M, 1G")(
      "max-bytes,e", po::value(&max_text), "largest V (the sweep stops at or below it)")(
      "factor,f", po::value(&factor)->default_value(2),
      "integer growth factor between sizes, >= 2")(
      "dtype", po::value(&dtype)->default_value("bf16"), "element type: bf16 or f32")(
      "timing-only", "move no payload: same timing, no data check, memory independent of V")(
      "time-limit", po::value(&time_limit_s)->default_value(60),
      "stop each run after this many seconds of simulated time")(
      "csv", po::value(&csv), "also write the rows to this CSV file")(
      "max-wall", po::value(&max_wall),
      "fail a row whose run takes more than this many host seconds")(
      "max-rss", po::value(&max_rss), "fail a row whose run peaks above this many MiB")(
      "json", "end the output with the rows as one JSON array on the last line");
  po::options_description hidden;
  hidden.add_options()("kernel", po::value(&kernel));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("kernel", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("bench", e.what());
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  if (kernel.empty())
    throw UsageError("bench", "name the kernel to run, e.g. tpusim bench all_gather_bidi.");
  const kernels::KernelInfo* info = kernels::Registry::Get().Find(kernel);
  if (!info) {
    std::string known;
    for (const auto& n : kernels::Registry::Get().Names())
      known += (known.empty() ? "" : ", ") + n;
    throw UsageError("bench", "unknown kernel '" + kernel + "'; known kernels: " + known + ".");
  }
  if (topology.empty())
    throw UsageError("bench", "--topology is required, e.g. --topology v5e-16x16.");
  if (min_text.empty()) throw UsageError("bench", "--min-bytes is required, e.g. --min-bytes 1K.");
  if (max_text.empty()) throw UsageError("bench", "--max-bytes is required, e.g. --max-bytes 1G.");
  const uint64_t min_bytes = ParseBytes("bench", "--min-bytes", min_text);
  const uint64_t max_bytes = ParseBytes("bench", "--max-bytes", max_text);
  if (min_bytes == 0) throw UsageError("bench", "--min-bytes must be at least 1 byte.");
  if (min_bytes > max_bytes) {
    throw UsageError("bench", "--min-bytes " + min_text + " is above --max-bytes " + max_text +
                                  "; the sweep runs from the smaller to the larger size.");
  }
  if (factor < 2) {
    throw UsageError("bench", "--factor " + std::to_string(factor) +
                                  " must be an integer of at least 2 (each size is the previous "
                                  "one times the factor).");
  }
  const uint64_t time_limit = ParseTimeLimit("bench", time_limit_s);
  if (vm.count("max-wall") && !(max_wall > 0))
    throw UsageError("bench", "--max-wall must be a positive number of seconds.");
  if (vm.count("max-rss") && !(max_rss > 0))
    throw UsageError("bench", "--max-rss must be a positive number of MiB.");

  KernelRunRequest base;
  base.kernel = kernel;
  base.topology = topologies::LoadTopology(topology);
  base.args.axis = axis;
  base.args.dtype = dsl::ParseDType(dtype);
  base.args.functional = !vm.count("timing-only");
  base.time_limit = time_limit;
  const dsl::Mesh mesh(base.topology);
  const int axis_index = mesh.AxisIndex(axis);  // throws for an unknown axis

  // The sweep, checked before anything runs: the first size must split (an error that
  // names the nearest valid sizes); a later one the kernel rejects is skipped with a note.
  std::vector<uint64_t> sizes;
  std::vector<std::string> notes;
  kernels::Bound bound;
  for (uint64_t v = min_bytes; v <= max_bytes;) {
    kernels::CollectiveArgs args = base.args;
    args.bytes = v;
    args.functional = false;  // placeholders: checks the shapes without making data
    try {
      info->make(mesh, args);
      bound = info->bound(mesh, args);
      sizes.push_back(v);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidArgument) throw;
      if (sizes.empty() && v == min_bytes) {
        std::string message = e.what();
        const std::string option = "--bytes " + std::to_string(v);
        if (message.rfind(option, 0) == 0)
          message = "--min-bytes " + std::to_string(v) + message.substr(option.size());
        throw UsageError("bench", message);
      }
      notes.push_back("skipped " + std::to_string(v) + " bytes: " + e.what());
    }
    if (v > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(factor)) break;
    v *= static_cast<uint64_t>(factor);
  }
  if (ParseOnly()) return 0;

  const bool wraparound = base.topology.mesh().wraparound(axis_index);
  std::cout << "# tpusim bench " << kernel << " on " << base.topology.name() << " ("
            << mesh.devices() << " chips), axis '" << axis << "' of " << mesh.shape()[axis_index]
            << (wraparound ? " with" : " without") << " wraparound, " << dtype
            << (base.args.functional ? ", data checked" : ", timing only") << "\n"
            << "# bound: " << bound.formula << " (docs/references.md §3)\n";
  for (const auto& note : notes)
    std::cout << "# " << note << "\n";
  std::cout << "#\n"
            << "#         size         time     algbw     busbw        bound  %bound   data     "
               "wall     events   Mev/s      RSS\n"
            << "#          (B)         (us)    (GB/s)    (GB/s)         (us)       %          "
               "(s)                         (MiB)\n";

  std::ofstream csv_file;
  if (!csv.empty()) {
    csv_file.open(csv);
    if (!csv_file) throw UsageError("bench", "cannot write the CSV file '" + csv + "'.");
    csv_file << kCsvHeader << "\n";
  }
  const bool progress = isatty(STDERR_FILENO);
  std::vector<Row> rows;
  const auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (progress) {
      std::cerr << "\r\033[K[" << i + 1 << "/" << sizes.size() << "] " << kernel << " "
                << HumanBytes(sizes[i]) << " ..." << std::flush;
    }
    KernelRunRequest request = base;
    request.args.bytes = sizes[i];
    rows.push_back(RunInChild(request));
    Row& row = rows.back();
    if (max_wall > 0 && row.process_seconds > max_wall) {
      row.over_budget = true;
      row.problem += (row.problem.empty() ? "" : "; ") +
                     Format("took %.3f s", row.process_seconds) +
                     Format(", over --max-wall %g s", max_wall);
    }
    if (max_rss > 0 && row.rss_mib > max_rss) {
      row.over_budget = true;
      row.problem += (row.problem.empty() ? "" : "; ") + Format("peaked at %.1f MiB", row.rss_mib) +
                     Format(", over --max-rss %g MiB", max_rss);
    }
    if (progress) std::cerr << "\r\033[K" << std::flush;
    PrintRow(std::cout, rows.back());
    if (!rows.back().problem.empty())
      std::cout << "#   " << HumanBytes(sizes[i]) << ": " << rows.back().problem << "\n";
    std::cout.flush();
    if (csv_file) CsvRow(csv_file, rows.back());
  }
  const double total_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  double busbw_sum = 0, min_pct = 0, max_pct = 0, events = 0, sim_wall = 0;
  int completed = 0;
  bool all_ok = true;
  for (const Row& row : rows) {
    all_ok = all_ok && row.ok();
    if (!row.completed()) continue;
    const double pct = row.Number("percent_of_bound");
    min_pct = completed == 0 ? pct : std::min(min_pct, pct);
    max_pct = completed == 0 ? pct : std::max(max_pct, pct);
    busbw_sum += row.Number("busbw_gbps");
    events += row.Number("events");
    sim_wall += row.Number("wall_seconds");
    ++completed;
  }
  char summary[320];
  std::snprintf(summary, sizeof summary,
                "# %d of %zu sizes completed%s; avg bus bandwidth %.2f GB/s; %% of bound "
                "min %.1f%% max %.1f%%; wall %.3f s total (%.3f s simulating, %.2f M events/s)",
                completed, rows.size(), all_ok ? "" : " (FAILURES above)",
                completed ? busbw_sum / completed : 0.0, min_pct, max_pct, total_wall, sim_wall,
                sim_wall > 0 ? events / sim_wall / 1e6 : 0.0);
  std::cout << summary << "\n";
  if (vm.count("json")) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      nlohmann::ordered_json j =
          row.ran ? row.report : nlohmann::ordered_json{{"bytes", row.bytes}};
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
