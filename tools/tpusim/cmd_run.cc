// tpusim run KERNEL: one kernel on one slice, with a human summary and optional JSON.

#include <boost/program_options.hpp>
#include <iostream>

#include "dsl/cost.h"
#include "dsl/dtype.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/kernel_run.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

std::string Percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", value);
  return text;
}

std::string FlopRate(double flops_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f TFLOP/s", flops_per_s / 1e12);
  return text;
}

// Compute kernels: FLOP/s against the MXU peak and the roofline of docs/references.md §1.
void PrintRooflineSummary(const KernelRunReport& r) {
  std::cout << r.kernel << " on " << r.topology << " (" << r.chips
            << " chips, each computing independently): " << r.dtype << " [" << r.m << ", " << r.k
            << "] @ [" << r.k << ", " << r.n << "]";
  for (size_t i = 0; i < r.blocks.size(); ++i)
    std::cout << (i ? "x" : ", blocks ") << r.blocks[i];
  std::cout << (r.functional ? "" : ", timing only") << "\n";
  if (!r.completed) {
    std::cout << "  FAILED (" << ErrorKindName(*r.error_kind) << ")\n" << r.error << "\n";
  } else {
    std::cout << "  simulated time   " << HumanSeconds(r.sim_seconds) << "\n"
              << "  achieved         " << FlopRate(r.achieved_flops) << "   "
              << Percent(100 * r.achieved_flops / r.peak_flops) << " of the MXU peak "
              << FlopRate(r.peak_flops) << "\n"
              << "  MXU utilisation  " << Percent(100 * r.mxu_utilisation)
              << "   (MXU busy / time)\n"
              << "  roofline bound   " << HumanSeconds(r.bound_seconds) << "   " << r.bound_formula
              << "; HBM " << HumanBytes(static_cast<uint64_t>(r.hbm_bytes))
              << ", docs/references.md §1\n"
              << "  of bound         " << Percent(r.percent_of_bound())
              << "   (bound / simulated time)\n";
    if (!r.functional) {
      std::cout << "  data             not checked (timing-only run)\n";
    } else if (r.correct) {
      std::cout << "  data             matches the reference on all " << r.chips << " chips\n";
    } else {
      std::cout << "  data             WRONG: " << r.mismatch << "\n";
    }
  }
}

void PrintCollectiveSummary(const KernelRunReport& r) {
  std::cout << r.kernel << " on " << r.topology << " (" << r.chips << " chips), axis '" << r.axis
            << "' of " << r.axis_size << (r.wraparound ? " with" : " without") << " wraparound, "
            << HumanBytes(r.bytes) << " " << r.dtype << (r.functional ? "" : ", timing only")
            << "\n";
  if (!r.completed) {
    std::cout << "  FAILED (" << ErrorKindName(*r.error_kind) << ")\n" << r.error << "\n";
  } else {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", r.percent_of_bound());
    std::cout << "  simulated time   " << HumanSeconds(r.sim_seconds) << "\n"
              << "  algorithm bw     " << HumanRate(r.algbw) << "   (V / time)\n"
              << "  bus bw           " << HumanRate(r.busbw) << "\n"
              << "  analytic bound   " << HumanSeconds(r.bound_seconds) << "   " << r.bound_formula
              << ", docs/references.md §3\n"
              << "  of bound         " << pct << "   (bound / simulated time)\n";
    if (!r.functional) {
      std::cout << "  data             not checked (timing-only run)\n";
    } else if (r.correct) {
      std::cout << "  data             matches the reference on all " << r.chips << " chips\n";
    } else {
      std::cout << "  data             WRONG: " << r.mismatch << "\n";
    }
  }
}

void PrintSummary(const KernelRunReport& r) {
  if (r.roofline) {
    PrintRooflineSummary(r);
  } else {
    PrintCollectiveSummary(r);
  }
  if (!r.trace_path.empty()) {
    std::cout << "  trace            " << r.trace_path
              << "   (open it at https://ui.perfetto.dev)\n";
  }
  std::cout << "  wall time        " << HumanSeconds(r.wall_seconds) << ", " << r.events
            << " model events\n";
}

}  // namespace

int RunRun(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string kernel, topology, axis, bytes_text, dtype, trace, axis2, precision;
  double time_limit_s = 60;
  int64_t m = 0, k = 0, n = 0, bm = 0, bk = 0, bn = 0;
  po::options_description options(
      "tpusim run KERNEL --topology T --axis A --bytes V [options]\n"
      "tpusim run matmul --topology T --m M --k K --n N [--bm --bk --bn] [options]\n\n"
      "Runs KERNEL on every chip of slice T. V is the size in bytes of the full (gathered)\n"
      "array, as in docs/references.md §3. A matmul computes [M, K] @ [K, N] on each chip and\n"
      "is judged against the roofline of docs/references.md §1. Exits 0 only when the run\n"
      "completed and the data matches the host reference.\n\noptions");
  options.add_options()("help,h", "show this help")(
      "topology,t", po::value(&topology),
      "preset name (see `tpusim topologies`) or .textproto path")(
      "axis,a", po::value(&axis)->default_value("x"), "mesh axis the collective runs over")(
      "axis2", po::value(&axis2),
      "second mesh axis of two-axis kernels (all_gather_2d, agw_matmul_*); default: the "
      "first other axis")("bytes,b", po::value(&bytes_text),
                          "V, the full array size: 4096, 64K, 16M, 1G")(
      "dtype", po::value(&dtype)->default_value("bf16"),
      "element type: bf16 or f32 (matmul also int8, int32)")(
      "precision", po::value(&precision)->default_value("DEFAULT"),
      "matmul dots on f32: DEFAULT (one bf16 pass), HIGH (three) or HIGHEST (six)")(
      "trace", po::value(&trace), "write a trace here (.pftrace: Perfetto; .json: Chrome JSON)")(
      "timing-only", "move no payload: same timing, no data check, memory independent of V")(
      "time-limit", po::value(&time_limit_s)->default_value(60),
      "stop a run after this many seconds of simulated time")(
      "json", "end the output with one JSON object on the last line")(
      "m", po::value(&m), "matmuls: rows of A and of the output")("k", po::value(&k),
                                                                  "matmuls: the contracting dim")(
      "n", po::value(&n), "matmuls: columns of B and of the output")(
      "bm", po::value(&bm), "matmul block rows (default: up to 512)")(
      "bk", po::value(&bk), "matmul block contracting dim (default: up to 1024)")(
      "bn", po::value(&bn), "matmul block columns (default: up to 1024)");
  InterpretChecks::AddOptions(options);
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
    throw UsageError("run", e.what());
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  if (kernel.empty())
    throw UsageError("run", "name the kernel to run, e.g. tpusim run all_gather_ring.");
  if (topology.empty()) throw UsageError("run", "--topology is required, e.g. --topology v5e-4x4.");
  const bool matmul_problem = m != 0 || k != 0 || n != 0;
  if (bytes_text.empty() && !matmul_problem) {
    throw UsageError("run",
                     "--bytes is required, e.g. --bytes 16M (matmuls take --m --k --n instead).");
  }
  for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"--m", m},
                                    {"--k", k},
                                    {"--n", n},
                                    {"--bm", bm},
                                    {"--bk", bk},
                                    {"--bn", bn}}) {
    if (value < 0) throw UsageError("run", std::string(flag) + " must be positive.");
  }
  const uint64_t time_limit = ParseTimeLimit("run", time_limit_s);

  KernelRunRequest request;
  request.kernel = kernel;
  request.topology = topologies::LoadTopology(topology);
  request.args.axis = axis;
  request.args.axis2 = axis2;
  if (!bytes_text.empty()) request.args.bytes = ParseBytes("run", "--bytes", bytes_text);
  request.args.m = m;
  request.args.k = k;
  request.args.n = n;
  request.args.bm = bm;
  request.args.bk = bk;
  request.args.bn = bn;
  request.args.dtype = dsl::ParseDType(dtype);
  request.args.precision = dsl::ParsePrecision(precision);
  request.args.functional = !vm.count("timing-only");
  request.checks = InterpretChecks::Parse("run", vm);
  request.trace_path = trace;
  request.time_limit = time_limit;
  if (ParseOnly()) return 0;
  const KernelRunReport report = RunKernel(request);

  PrintSummary(report);
  if (vm.count("json")) std::cout << report.ToJson().dump() << std::endl;
  return report.ok() ? 0 : 1;
}

}  // namespace tpusim::cli
