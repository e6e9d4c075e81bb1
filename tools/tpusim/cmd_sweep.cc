// tpusim sweep ENTRY...: the cartesian product of parameter values, topologies and run
// options, each point a `tpusim run` in its own process, a few at a time; a table, CSV,
// JSON or a plot of the rows. --shard runs every N-th point (one task of a cluster job),
// --merge joins the shards' JSON outputs.

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/plot.h"
#include "tools/tpusim/point_runner.h"
#include "tools/tpusim/sweep_rows.h"

namespace tpusim::cli {

namespace {

namespace po = boost::program_options;

constexpr const char* kHelp =
    R"(tpusim sweep ENTRY... --topology T[,T...] --param NAME=VALUES [--param ...] [options]
tpusim sweep --merge FILE... [--csv | --json] [--plot FILE]

Runs every combination of the swept values: each --param NAME=V1,V2,... (or
NAME=FROM:TO[:xF], the values FROM, FROM*F, ... up to TO, F 2 unless given) sweeps a
parameter every ENTRY declares (`tpusim run ENTRY --help` lists them; an HLO module file's
are device_order, kernel_map and unknown_ops), a run option (timing_only=true,false,
time_limit, no_race_check, uninitialized_memory, out_of_bounds_reads, grid_seed) or the
topology (--param topology=A,B, or --topology A,B). Several entries sweep together.
Parameters set with their flags (--bytes 64M) hold for every point. Every value is
checked before anything runs.

Each point is one `tpusim run ENTRY ... --json` in a child process (this binary, started
again), -j at a time, with a progress bar on stderr when it is a terminal. A point that
fails is a row with its error, and the sweep goes on. Rows list the first --param's
values for each value of the next, and so on. Output: a table (time, bound, % of bound,
bus bandwidth for collectives, ICI bytes per chip, peak HBM, data check, the point's wall
time), or --csv / --json with every metric; --plot FILE.svg|.png draws simulated time
against the first swept parameter (log scale where it spans a decade), one series per
value of the others, the analytic bound dashed.

On a cluster: --shard i/N runs points i-1, i-1+N, i-1+2N, ... (one task of N), and
`tpusim sweep --merge shard-*.json` joins their --json outputs into the whole sweep;
docs/sweep.md shows GNU parallel over ssh hosts and a Slurm job array. Exits 0 when every
point completed and its data checked out, 1 otherwise (and for a merge that misses
points), 2 for a bad sweep.

options)";

struct Shard {
  size_t index = 1, count = 1;  // index from 1
  std::string text;             // "2/8"; empty for the whole sweep
};

Shard ParseShard(const std::string& text) {
  Shard shard;
  std::istringstream in(text);
  char slash = 0;
  long long i = 0, n = 0;
  if (!(in >> i >> slash >> n) || slash != '/' || !in.eof() || n < 1 || i < 1 || i > n) {
    throw UsageError("sweep", "--shard '" + text +
                                  "' is not i/N with 1 <= i <= N; e.g. --shard 2/8 runs the "
                                  "second of eight shards.");
  }
  shard.index = static_cast<size_t>(i);
  shard.count = static_cast<size_t>(n);
  shard.text = text;
  return shard;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::istringstream in(text + ",");
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty())
      throw UsageError("sweep", "--topology '" + text + "' has an empty name between commas.");
    items.push_back(item);
  }
  return items;
}

bool IsNumber(const std::string& text) {
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  return !parsed.is_discarded() && parsed.is_number();
}

// Simulated time against the first swept dimension, a series per value of the others.
Plot SweepPlot(const SweepResult& result) {
  const auto& dims = result.plan.dimensions();
  const std::vector<size_t> swept = result.plan.Swept();
  const size_t xd = swept.front();
  const auto& x_values = dims[xd].axis.values;
  Plot plot;
  plot.x_label = dims[xd].axis.name;
  const bool numeric = std::all_of(x_values.begin(), x_values.end(), IsNumber);
  if (!numeric) plot.x_names = x_values;
  for (const auto& dim : dims) {
    if (dim.axis.name != "entry") continue;
    const kernels::KernelInfo* info = kernels::Registry::Get().Find(dim.axis.values.front());
    const kernels::Param* param = info ? info->FindParam(dims[xd].axis.name) : nullptr;
    plot.x_bytes = param && param->type() == kernels::ParamType::kBytes;
  }
  double top = 0;
  for (const SweepRow& row : result.rows)
    top = std::max(top, row.metrics.sim_seconds.value_or(0));
  const auto [unit, scale] = top >= 1      ? std::pair{"s", 1.0}
                             : top >= 1e-3 ? std::pair{"ms", 1e3}
                             : top >= 1e-6 ? std::pair{"us", 1e6}
                                           : std::pair{"ns", 1e9};
  plot.y_label = std::string("simulated time (") + unit + ")";
  std::vector<std::string> keys;
  std::map<std::string, std::pair<PlotSeries, PlotSeries>> series;  // key -> (time, bound)
  for (const SweepRow& row : result.rows) {
    std::string key;
    for (size_t s = 1; s < swept.size(); ++s) {
      if (!key.empty()) key += ", ";
      key += dims[swept[s]].axis.name + "=" + row.values[swept[s]];
    }
    if (!series.count(key)) keys.push_back(key);
    auto& [time, bound] = series[key];
    const size_t x_index = static_cast<size_t>(
        std::find(x_values.begin(), x_values.end(), row.values[xd]) - x_values.begin());
    const double x = numeric ? std::stod(row.values[xd]) : static_cast<double>(x_index);
    // A point that failed before its data check has no time worth drawing.
    if (row.metrics.sim_seconds && (row.ok() || row.metrics.correct)) {
      time.x.push_back(x);
      time.y.push_back(*row.metrics.sim_seconds * scale);
    }
    if (row.metrics.bound_seconds) {
      bound.x.push_back(x);
      bound.y.push_back(*row.metrics.bound_seconds * scale);
    }
  }
  for (const std::string& key : keys) {
    auto& [time, bound] = series[key];
    time.title = key.empty() ? "simulated time" : key;
    bound.title = key.empty() ? "analytic bound" : key + " bound";
    bound.bound = true;
    plot.series.push_back(time);
    if (!bound.x.empty()) plot.series.push_back(bound);
  }
  plot.title = "tpusim sweep";
  for (const auto& dim : dims) {
    if (dim.axis.name == "entry" || (dim.axis.name == "topology" && dim.axis.values.size() == 1))
      plot.title += " " + dim.axis.values.front();
  }
  return plot;
}

int Output(const SweepResult& result, const po::variables_map& vm, const std::string& plot) {
  if (vm.count("json")) {
    std::cout << SweepJson(result).dump() << std::endl;
  } else if (vm.count("csv")) {
    WriteSweepCsv(result, std::cout);
  } else {
    PrintSweepTable(result, std::cout);
  }
  if (!plot.empty()) {
    DrawPlot(SweepPlot(result), plot);
    std::cerr << "tpusim sweep: plotted " << plot << "\n";
  }
  return result.ok() ? 0 : 1;
}

int Merge(const std::vector<std::string>& files, const po::variables_map& vm,
          const std::string& plot) {
  std::vector<size_t> missing;
  const SweepResult result = MergeSweeps(files, missing);
  if (!plot.empty() && result.plan.Swept().empty())
    throw UsageError("sweep", "--plot needs a swept dimension; the merged sweep has one point.");
  if (ParseOnly()) return 0;
  const int status = Output(result, vm, plot);
  if (missing.empty()) return status;
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 10; ++i)
    list += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > 10) list += ", ...";
  std::cerr << "tpusim sweep: points " << list << " (" << missing.size() << " of "
            << result.plan.points()
            << ") are in none of the files: run their shards again and merge every shard's "
               "output.\n";
  return 1;
}

}  // namespace

int RunSweep(int argc, char** argv) {
  std::vector<std::string> param_texts;
  std::string shard_text, plot;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po::options_description options(kHelp);
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  options.add_options()("param,p", po::value(&param_texts)->composing(),
                        "NAME=V1,V2,... or NAME=FROM:TO[:xF]: a swept dimension (repeatable)")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "points run at once (default: the cores)")(
      "shard", po::value(&shard_text), "i/N: run only points i-1, i-1+N, ... (1 <= i <= N)")(
      "csv", "print the rows as CSV, every metric a column")(
      "json", "print the sweep as one JSON object (what --merge reads)")(
      "plot", po::value(&plot),
      "also draw simulated time against the first swept parameter "
      "into this .svg or .png (needs gnuplot)")(
      "merge", "join the --json outputs of a sweep's shards, named instead of the entries");
  const ParamFlags params;
  std::vector<std::string> positionals;
  po::variables_map vm;
  const bool merge =
      std::any_of(argv, argv + argc, [](const char* a) { return std::string(a) == "--merge"; });
  const bool go = merge
                      ? ParseCommandLine("sweep", argc, argv, options, -1, positionals, vm)
                      : ParseCommandLine("sweep", argc, argv, options, -1, positionals, vm, params);
  if (!go) return 0;
  if (vm.count("csv") && vm.count("json"))
    throw UsageError("sweep", "give one of --csv and --json: both print the rows.");
  if (!plot.empty()) CheckPlotFile("sweep", plot);
  if (merge) {
    for (const char* option : {"param", "shard", "topology"}) {
      if (vm.count(option)) {
        throw UsageError("sweep", std::string("--merge takes the shards' files only; --") + option +
                                      " belongs to the sweep that wrote them.");
      }
    }
    return Merge(positionals, vm, plot);
  }
  if (jobs < 1) throw UsageError("sweep", "--jobs must be at least 1.");
  if (vm.count("slices")) {
    throw UsageError("sweep",
                     "--slices is not swept yet; give a topology file with multislice { slices: N "
                     "} instead (docs/model.md, \"Multi-slice\").");
  }
  const Shard shard = shard_text.empty() ? Shard{} : ParseShard(shard_text);
  const SweepPlan plan = SweepPlan::Make("sweep", positionals, SplitList(common.topology()),
                                         param_texts, vm, params, common);
  if (!plot.empty() && plan.Swept().empty()) {
    throw UsageError("sweep",
                     "--plot needs a swept dimension: give a --param or --topology "
                     "with two or more values.");
  }
  if (ParseOnly()) return 0;

  std::vector<size_t> points;
  std::vector<std::vector<std::string>> commands;
  for (size_t point = shard.index - 1; point < plan.points(); point += shard.count) {
    points.push_back(point);
    commands.push_back(plan.Command(point));
  }
  const PointRunner runner(jobs, isatty(STDERR_FILENO) != 0);
  const std::vector<PointOutcome> outcomes = runner.Run(commands);
  SweepResult result{plan, shard.text, {}};
  for (size_t i = 0; i < points.size(); ++i) {
    result.rows.push_back(
        SweepRow{points[i], plan.ValuesAt(points[i]), outcomes[i].metrics, outcomes[i].error});
  }
  return Output(result, vm, plot);
}

}  // namespace tpusim::cli
