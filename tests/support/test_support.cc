#include "tests/support/test_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/compute_models.h"
#include "topologies/topology_loader.h"
#include "traces/trace_checker.h"
#include "traces/trace_sink.h"

namespace tpusim::testing {

config::Topology MakeTopology(const std::vector<int>& shape, const std::vector<bool>& wraparound,
                              const std::function<void(config::Topology&)>& tweak) {
  config::Topology t = topologies::LoadTopology("v5e-2x2");
  t.clear_name();
  t.mutable_mesh()->clear_shape();
  t.mutable_mesh()->clear_axis_names();
  t.mutable_mesh()->clear_wraparound();
  for (int n : shape)
    t.mutable_mesh()->add_shape(n);
  for (bool w : wraparound)
    t.mutable_mesh()->add_wraparound(w);
  // Fixed costs a mechanism's test would have to add to every expected time: zero, so a test
  // sees bandwidths and hop latencies alone. Tests of these terms set them
  // (tests/modules/latency_test.cc, tests/modules/compute_model_test.cc).
  t.mutable_chip()->mutable_dma()->clear_issue_latency_ns();
  t.mutable_ici()->clear_signal_latency_ns();
  t.mutable_chip()->mutable_cost()->clear_op_launch_ns();
  // Any shape, wrapped anywhere, with a v5e chip: a test machine, not a real v5e slice, so
  // v5e's rules (wraparound, power-of-two DMA offsets) do not apply.
  t.set_allow_nonphysical(true);
  if (tweak) tweak(t);
  topologies::ValidateTopology(t, "test topology");
  return t;
}

dsl::Mesh OneChipMesh() {
  return dsl::Mesh(MakeTopology({1}, {false}));
}

std::string TempPath(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = std::filesystem::temp_directory_path() / "tpusim-tests";
  std::filesystem::create_directories(dir);
  std::string base = info ? std::string(info->test_suite_name()) + "." + info->name() : "test";
  for (auto& c : base) {
    if (c == '/') c = '_';
  }
  return dir + "/" + base + "." + name;
}

void ExpectTraceValid(const std::string& path) {
  const auto check = traces::CheckPerfettoTraceFile(path);
  EXPECT_TRUE(check.ok()) << path << ":\n" << check.ProblemsText();
  EXPECT_GT(check.summary.slices, 0u) << path << " has no slices";
}

CheckedRun RunAndCheckTrace(const dsl::ShardMap& program, const std::vector<dsl::Array>& inputs,
                            dsl::RunOptions options, const std::string& trace_name) {
  CheckedRun run;
  run.trace_path = TempPath(trace_name + ".pftrace");
  auto sink = traces::OpenTraceFile(run.trace_path);
  options.trace = sink.get();
  run.result = program.Run(inputs, options);
  sink->Finish();
  sink.reset();
  ExpectTraceValid(run.trace_path);
  return run;
}

CheckedRun RunWorkload(kernels::Workload& workload, bool functional,
                       const std::string& trace_name) {
  dsl::RunOptions options;
  options.functional = functional;
  return RunAndCheckTrace(workload.program, workload.inputs, options, trace_name);
}

const kernels::KernelInfo& Entry(const std::string& name) {
  const auto* info = kernels::Registry::Get().Find(name);
  if (!info) throw std::runtime_error("no registry entry '" + name + "'");
  return *info;
}

kernels::Params ParamsFor(const std::string& name, const kernels::ParamValues& values,
                          bool functional) {
  kernels::Params params = Entry(name).Bind(values);
  params.functional = functional;
  return params;
}

Measured RunTimed(const std::string& kernel, const config::Topology& topology,
                  const kernels::ParamValues& values, bool functional) {
  const auto* info = kernels::Registry::Get().Find(kernel);
  EXPECT_NE(info, nullptr) << kernel;
  if (!info) return {};
  const dsl::Mesh mesh(topology);
  const kernels::Params args = ParamsFor(kernel, values, functional);
  kernels::Workload w = info->make(mesh, args);
  dsl::RunOptions options;
  options.functional = functional;
  const dsl::RunResult result = w.program.Run(w.inputs, options);
  EXPECT_TRUE(result.ok) << result.error;
  Measured m;
  m.seconds = static_cast<double>(result.time()) * 1e-12;
  double blocked = 0;
  for (const auto& core : result.stats.cores)
    blocked += static_cast<double>(core.blocked) * 1e-12;
  m.exposed_fraction = blocked / result.stats.cores.size() / m.seconds;
  m.bound_seconds = info->bound(mesh, args).seconds;
  return m;
}

nlohmann::json LastLineJson(const std::string& out) {
  const auto end = out.find_last_not_of('\n');
  const auto start = out.rfind('\n', end);
  return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
}

CommandResult RunTpusim(const std::string& args) {
  return RunShell(std::string(TPUSIM_BINARY) + " " + args);
}

CommandResult RunShell(const std::string& shell_command) {
  const std::string err_path = TempPath("stderr.txt");
  const std::string command = "{ " + shell_command + "\n} 2>" + err_path;
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream s;
  s << err.rdbuf();
  result.err = s.str();
  return result;
}

double ModelSeconds(const config::ChipConfig& chip, const base::Work& work) {
  const sim::ComputePlan plan = sim::ComputeModels::Build(chip, "the chip")->Plan(work, "work");
  return static_cast<double>(plan.Alone(chip.clock_hz())) * 1e-12;
}

uint64_t ModelCycles(const config::ChipConfig& chip, const base::Work& work) {
  return sim::ComputeModels::Build(chip, "the chip")->Plan(work, "work").cycles;
}

base::XlaOp XlaDotWork(double flops, base::MxuInput input, base::Precision precision, double read,
                       double written) {
  base::XlaOp op;
  op.dots.push_back({flops, input, precision});
  op.hbm_read_bytes = read;
  op.hbm_write_bytes = written;
  return op;
}

dsl::Array HostDot(const dsl::Array& a, const dsl::Array& b, dsl::DType out_dtype) {
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  dsl::Array out({m, n}, out_dtype);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += a.GetFlat(i * k + p) * b.GetFlat(p * n + j);
      out.SetFlat(i * n + j, acc);
    }
  }
  return out;
}

}  // namespace tpusim::testing
