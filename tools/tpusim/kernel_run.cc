#include "tools/tpusim/kernel_run.h"

#include <chrono>
#include <memory>

#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "traces/trace_sink.h"

namespace tpusim::cli {

nlohmann::ordered_json KernelRunReport::ToJson() const {
  nlohmann::ordered_json j;
  j["kernel"] = kernel;
  j["topology"] = topology;
  j["chips"] = chips;
  j["axis"] = axis;
  j["axis_size"] = axis_size;
  j["wraparound"] = wraparound;
  j["bytes"] = bytes;
  j["dtype"] = dtype;
  j["timing_only"] = !functional;
  j["completed"] = completed;
  j["sim_time_ns"] = sim_seconds * 1e9;
  j["analytic_ns"] = bound_seconds * 1e9;
  j["analytic_formula"] = bound_formula;
  j["percent_of_bound"] = percent_of_bound();
  j["algbw_gbps"] = algbw / 1e9;
  j["busbw_gbps"] = busbw / 1e9;
  if (roofline) {
    j["m"] = m;
    j["k"] = k;
    j["n"] = n;
    j["blocks"] = blocks;
    j["flops"] = flops;
    j["achieved_flops_per_s"] = achieved_flops;
    j["peak_flops_per_s"] = peak_flops;
    j["percent_of_peak"] = peak_flops > 0 ? 100 * achieved_flops / peak_flops : 0;
    j["mxu_utilisation"] = mxu_utilisation;
    j["hbm_bytes"] = hbm_bytes;
    j["roofline_ns"] = bound_seconds * 1e9;
  }
  if (functional) {
    j["correct"] = correct;
  } else {
    j["correct"] = nullptr;
  }
  if (!mismatch.empty()) j["mismatch"] = mismatch;
  if (error_kind) {
    j["error_kind"] = ErrorKindName(*error_kind);
    j["error"] = error;
  }
  j["trace"] =
      trace_path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(trace_path);
  j["wall_seconds"] = wall_seconds;
  j["events"] = events;
  return j;
}

void InterpretChecks::AddOptions(boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  options.add_options()("no-race-check",
                        "skip the happens-before race check of functional runs (it is on by "
                        "default, as interpret mode's detect_races)")(
      "uninitialized-memory", po::value<std::string>()->default_value("nan"),
      "what memory no one wrote reads as: nan (integers: the dtype's max) or zero")(
      "grid-seed", po::value<std::string>(),
      "run the grid points of 'parallel' dimensions in an order drawn from this seed "
      "(default: lexicographic)");
}

InterpretChecks InterpretChecks::Parse(const std::string& command,
                                       const boost::program_options::variables_map& vm) {
  InterpretChecks checks;
  checks.race_check = !vm.count("no-race-check");
  const std::string memory = vm["uninitialized-memory"].as<std::string>();
  if (memory == "zero") {
    checks.uninitialized_memory = dsl::UninitializedMemory::kZero;
  } else if (memory != "nan") {
    throw UsageError(command, "--uninitialized-memory is '" + memory + "'; use nan or zero.");
  }
  if (vm.count("grid-seed")) {
    const std::string text = vm["grid-seed"].as<std::string>();
    size_t used = 0;
    uint64_t seed = 0;
    try {
      if (!text.empty() && text[0] != '-') seed = std::stoull(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) {
      throw UsageError(command, "--grid-seed is '" + text +
                                    "'; give a whole number from 0 to 18446744073709551615.");
    }
    checks.grid_seed = seed;
  }
  return checks;
}

std::string ShardingContract(const dsl::ShardMap& program, const std::vector<dsl::Array>& inputs) {
  std::string text = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    text += (i ? ", " : "") + dsl::TypeString(inputs[i].dtype(), inputs[i].shape()) + " " +
            program.in_specs()[i].Describe();
  }
  text += ") -> (";
  const auto& outs = program.call().out_shape;
  for (size_t i = 0; i < outs.size(); ++i) {
    text += (i ? ", " : "") + std::string(dsl::DTypeName(outs[i].dtype)) + " block " +
            dsl::ShapeString(outs[i].shape) + " " + program.out_specs()[i].Describe();
  }
  return text + ")";
}

namespace {

// A functional run copies each input block into every chip's HBM, reads every output block
// back and assembles the global outputs: refuse it up front when that would not fit.
void RequireRunMemory(const dsl::ShardMap& program, const std::vector<dsl::Array>& inputs) {
  const dsl::Mesh& mesh = program.mesh();
  const double devices = mesh.devices();
  double bytes = 0;  // double: a sum of huge sizes saturates instead of wrapping
  for (size_t i = 0; i < inputs.size(); ++i) {
    const dsl::Shape block = program.in_specs()[i].BlockShape(mesh, inputs[i].shape(), "input");
    bytes +=
        devices * static_cast<double>(dsl::NumElements(block)) * dsl::SizeOf(inputs[i].dtype());
  }
  for (const auto& out : program.call().out_shape) {
    const double block = static_cast<double>(dsl::NumElements(out.shape)) * dsl::SizeOf(out.dtype);
    bytes += 3 * devices * block;  // in HBM, read back per chip, and assembled
  }
  const double most = static_cast<double>(~uint64_t{0});
  dsl::RequireHostMemory(bytes < most ? static_cast<uint64_t>(bytes) : ~uint64_t{0},
                         "a functional run on " + std::to_string(mesh.devices()) +
                             " chips (every chip's input and output blocks)");
}

}  // namespace

KernelRunReport RunKernel(const KernelRunRequest& request) {
  const kernels::KernelInfo* info = kernels::Registry::Get().Find(request.kernel);
  if (!info) {
    std::string known;
    for (const auto& n : kernels::Registry::Get().Names())
      known += (known.empty() ? "" : ", ") + n;
    throw UsageError("run",
                     "unknown kernel '" + request.kernel + "'; known kernels: " + known + ".");
  }
  const dsl::Mesh mesh(request.topology);
  const int axis_index = mesh.AxisIndex(request.args.axis);

  KernelRunReport report;
  report.kernel = request.kernel;
  report.topology = request.topology.name();
  report.chips = static_cast<uint64_t>(mesh.devices());
  report.axis = request.args.axis;
  report.axis_size = mesh.shape()[axis_index];
  report.wraparound = request.topology.mesh().wraparound(axis_index);
  report.bytes = request.args.bytes;
  report.dtype = dsl::DTypeName(request.args.dtype);
  report.functional = request.args.functional;
  report.trace_path = request.trace_path;

  kernels::Workload workload = info->make(mesh, request.args);
  const kernels::Bound bound = info->bound(mesh, request.args);
  report.bound_seconds = bound.seconds;
  report.bound_formula = bound.formula;
  if (bound.peak_flops > 0) {
    report.roofline = true;
    report.m = request.args.m;
    report.k = request.args.k;
    report.n = request.args.n;
    report.blocks = bound.blocks;
    report.flops = bound.flops;
    report.peak_flops = bound.peak_flops;
    report.hbm_bytes = bound.hbm_bytes;
  }

  if (request.args.functional) RequireRunMemory(workload.program, workload.inputs);

  std::unique_ptr<traces::TraceSink> trace;
  if (!request.trace_path.empty()) trace = traces::OpenTraceFile(request.trace_path);

  dsl::RunOptions options;
  options.functional = request.args.functional;
  options.trace = trace.get();
  options.time_limit = request.time_limit;
  options.race_check = request.checks.race_check;
  options.uninitialized_memory = request.checks.uninitialized_memory;
  options.grid_seed = request.checks.grid_seed;
  const auto started = std::chrono::steady_clock::now();
  const dsl::RunResult result = workload.program.Run(workload.inputs, options);
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (trace) trace->Finish();

  report.completed = result.ok;
  report.error_kind = result.error_kind;
  report.error = result.error;
  report.events = result.stats.events;
  report.stats = result.stats;
  report.contract = ShardingContract(workload.program, workload.inputs);
  report.sim_seconds = static_cast<double>(result.time()) * 1e-12;
  if (report.sim_seconds > 0) {
    report.algbw = static_cast<double>(report.bytes) / report.sim_seconds;
    if (info->bus_factor) report.busbw = report.algbw * info->bus_factor(report.axis_size);
    if (report.roofline) {
      report.achieved_flops = report.flops / report.sim_seconds;
      double busy = 0;
      for (const auto& core : result.stats.cores)
        busy += static_cast<double>(core.mxu_busy) * 1e-12;
      if (!result.stats.cores.empty())
        report.mxu_utilisation = busy / result.stats.cores.size() / report.sim_seconds;
    }
  }
  if (result.ok && request.args.functional) {
    const dsl::Comparison c = dsl::CheckAgainstReference(
        workload.program, result, workload.expected, workload.rtol, workload.atol);
    report.checked = true;
    report.correct = c.equal;
    report.mismatch = c.detail;
  }
  return report;
}

}  // namespace tpusim::cli
