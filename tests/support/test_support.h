#pragma once

// Helpers shared by the test suites: small topologies written in the test, runs that
// always write a trace and check it, and running the tpusim binary.

#include <functional>
#include <string>
#include <vector>

#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "topologies/topology.pb.h"

namespace tpusim::testing {

// A v5e chip on the given mesh; `tweak` may change any field before validation.
config::Topology MakeTopology(const std::vector<int>& shape, const std::vector<bool>& wraparound,
                              const std::function<void(config::Topology&)>& tweak = {});
// A fresh path under the test's temporary directory.
std::string TempPath(const std::string& name);

struct CheckedRun {
  dsl::RunResult result;
  std::string trace_path;
};
// Runs with a Perfetto trace, checks the trace (every begin has its end on its track,
// descriptors first, flows terminated) and fails the test if it does not pass.
CheckedRun RunAndCheckTrace(const dsl::ShardMap& program, const std::vector<dsl::Array>& inputs,
                            dsl::RunOptions options = {}, const std::string& trace_name = "run");
// The same for a registered kernel's workload.
CheckedRun RunWorkload(kernels::Workload& workload, bool functional = true,
                       const std::string& trace_name = "run");

void ExpectTraceValid(const std::string& path);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs the built tpusim binary with `args` (shell-quoted by the caller).
CommandResult RunTpusim(const std::string& args);

}  // namespace tpusim::testing
