// tpusim compare KERNEL...: several schedules of one computation on identical inputs,
// side by side, with where each one's time went.

#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "dsl/dtype.h"
#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/kernel_run.h"
#include "topologies/topology_loader.h"

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
  bound        lower bound: max(compute at peak MXU FLOP/s, communication at the link
               bound of docs/references.md §3); the kernel registry gives both parts
  of bound     bound / time: 100% means the schedule reaches the bound
  data         whether every chip's output matches the host reference
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

}  // namespace

int RunCompare(int argc, char** argv) {
  namespace po = boost::program_options;
  std::vector<std::string> kernels;
  std::string topology, axis, bytes_text, dtype, trace_dir, axis2;
  int64_t m = 0, k = 0, n = 0;
  po::options_description options(
      "tpusim compare KERNEL... --topology T --bytes V [options]\n\n"
      "Runs each kernel on identical inputs (same shapes, specs and seed), checks each\n"
      "result, and prints one row per kernel. Kernels must compute the same thing (the\n"
      "same sharding contract).\n\n" +
      std::string(kDefinitions) + "\noptions");
  options.add_options()("help,h", "show this help")("topology,t", po::value(&topology),
                                                    "preset name or .textproto path")(
      "axis,a", po::value(&axis)->default_value("x"), "mesh axis of the collective")(
      "axis2", po::value(&axis2),
      "second mesh axis of two-axis kernels (all_gather_2d, agw_matmul_*); default: the "
      "first other axis")("bytes,b", po::value(&bytes_text),
                          "collectives: V, the full array size: 4096, 64K, 16M, 1G")(
      "m", po::value(&m)->default_value(0), "matmuls: rows of A and Out (B)")(
      "k", po::value(&k)->default_value(0), "matmuls: the contracting dim (D)")(
      "n", po::value(&n)->default_value(0), "matmuls: columns of W and Out (F)")(
      "dtype", po::value(&dtype)->default_value("bf16"), "element type: bf16 or f32")(
      "trace-dir", po::value(&trace_dir),
      "write DIR/KERNEL.pftrace for each kernel; the track layouts match, so two traces "
      "open side by side")("timing-only", "move no payload (no data check)")(
      "json", "end the output with the rows as one JSON array on the last line");
  InterpretChecks::AddOptions(options);
  po::options_description hidden;
  hidden.add_options()("kernel", po::value(&kernels));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("kernel", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("compare", e.what());
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  if (kernels.empty())
    throw UsageError("compare",
                     "name the kernels to compare, e.g. all_gather_ring all_gather_bidi.");
  if (topology.empty())
    throw UsageError("compare", "--topology is required, e.g. --topology v5e-4x4.");
  if (bytes_text.empty() && (m == 0 || k == 0 || n == 0)) {
    throw UsageError("compare",
                     "give the problem: --bytes V for collectives, or --m --k --n for matmuls.");
  }

  KernelRunRequest request;
  request.topology = topologies::LoadTopology(topology);
  request.args.axis = axis;
  request.args.axis2 = axis2;
  if (!bytes_text.empty()) request.args.bytes = ParseBytes("compare", "--bytes", bytes_text);
  request.args.m = m;
  request.args.k = k;
  request.args.n = n;
  request.args.dtype = dsl::ParseDType(dtype);
  request.args.functional = !vm.count("timing-only");
  request.checks = InterpretChecks::Parse("compare", vm);

  // Refuse before running anything when the kernels do not compute the same thing.
  const dsl::Mesh mesh(request.topology);
  std::string first_contract;
  for (const auto& name : kernels) {
    const kernels::KernelInfo* info = kernels::Registry::Get().Find(name);
    if (!info) {
      std::string known;
      for (const auto& n : kernels::Registry::Get().Names())
        known += (known.empty() ? "" : ", ") + n;
      throw UsageError("compare", "unknown kernel '" + name + "'; known kernels: " + known + ".");
    }
    kernels::CollectiveArgs shapes_only = request.args;
    shapes_only.functional = false;
    const kernels::Workload w = info->make(mesh, shapes_only);
    const std::string contract = ShardingContract(w.program, w.inputs);
    if (first_contract.empty()) {
      first_contract = contract;
    } else if (contract != first_contract) {
      throw UsageError("compare", "'" + kernels[0] + "' and '" + name +
                                      "' have different sharding contracts, so they do not "
                                      "compute the same thing:\n  " +
                                      kernels[0] + ": " + first_contract + "\n  " + name + ": " +
                                      contract + "\ncompare schedules of one computation.");
    }
  }
  if (ParseOnly()) return 0;
  if (!trace_dir.empty()) PrepareTraceDirectory("compare", trace_dir);

  std::vector<Row> rows;
  for (const auto& name : kernels) {
    request.kernel = name;
    request.trace_path = trace_dir.empty() ? "" : trace_dir + "/" + name + ".pftrace";
    if (isatty(2)) std::cerr << "\rrunning " << name << "..." << std::flush;
    rows.push_back(Summarise(RunKernel(request)));
  }
  if (isatty(2)) std::cerr << "\r\033[K";

  const auto& r0 = rows.front().report;
  std::printf("%s on %s, axis '%s' (%d chips%s), %s %s%s\n", first_contract.c_str(),
              r0.topology.c_str(), r0.axis.c_str(), r0.axis_size,
              r0.wraparound ? ", wraparound" : "", HumanBytes(r0.bytes).c_str(), r0.dtype.c_str(),
              r0.functional ? "" : ", timing only");
  std::printf("%-26s %12s %8s %12s %7s %9s %12s %12s %9s  %s\n", "kernel", "time", "speedup",
              "exposed comm", "%", "MXU util", "busiest ICI", "bound", "of bound", "data");
  bool all_ok = true;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    const auto& r = row.report;
    all_ok = all_ok && r.ok();
    const double speedup = r.sim_seconds > 0 ? r0.sim_seconds / r.sim_seconds : 0;
    const double exposed_pct = r.sim_seconds > 0 ? 100 * row.exposed_seconds / r.sim_seconds : 0;
    const std::string data = !r.completed ? std::string("FAILED: ") + ErrorKindName(*r.error_kind)
                             : !r.functional ? "not checked"
                             : r.correct     ? "correct"
                                             : "WRONG";
    std::printf("%-26s %12s %7.2fx %12s %6.1f%% %8.1f%% %11.1f%% %12s %8.1f%%  %s\n",
                r.kernel.c_str(), HumanSeconds(r.sim_seconds).c_str(), speedup,
                HumanSeconds(row.exposed_seconds).c_str(), exposed_pct, 100 * row.mxu_utilisation,
                100 * row.busiest_link_utilisation, HumanSeconds(r.bound_seconds).c_str(),
                r.percent_of_bound(), data.c_str());
    if (!r.completed) std::printf("    %s\n", r.error.c_str());
    if (r.completed && r.functional && !r.correct) std::printf("    %s\n", r.mismatch.c_str());
    auto j = r.ToJson();
    j["speedup"] = speedup;
    j["exposed_comm_ns"] = row.exposed_seconds * 1e9;
    j["exposed_comm_percent"] = exposed_pct;
    j["mxu_utilisation"] = row.mxu_utilisation;
    j["busiest_link"] = row.busiest_link;
    j["busiest_link_utilisation"] = row.busiest_link_utilisation;
    j["contract"] = r.contract;
    json.push_back(j);
  }
  if (!trace_dir.empty()) {
    std::cout << "traces in " << trace_dir
              << "/ (open them side by side at https://ui.perfetto.dev)\n";
  }
  if (vm.count("json")) std::cout << json.dump() << std::endl;
  return all_ok ? 0 : 1;
}

}  // namespace tpusim::cli
