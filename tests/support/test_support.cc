#include "tests/support/test_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

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
  if (tweak) tweak(t);
  topologies::ValidateTopology(t, "test topology");
  return t;
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

CommandResult RunTpusim(const std::string& args) {
  const std::string err_path = TempPath("stderr.txt");
  const std::string command = std::string(TPUSIM_BINARY) + " " + args + " 2>" + err_path;
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

}  // namespace tpusim::testing
