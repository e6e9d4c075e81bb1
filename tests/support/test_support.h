#pragma once

// Helpers shared by the test suites: small topologies written in the test, runs that
// always write a trace and check it, and running the tpusim binary.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/work.h"
#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "topologies/topology.pb.h"

// Defined in a build with AddressSanitizer (make check's tree), which runs about 15x slower
// and keeps freed memory in quarantine: a test whose size or memory measurement the
// sanitizer distorts says so and adapts.
#if defined(__SANITIZE_ADDRESS__)
#define TPUSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TPUSIM_TEST_ASAN 1
#endif
#endif

namespace tpusim::testing {

// A v5e chip on the given mesh, without the fixed per-DMA, per-signal and per-launch costs
// (a test of one sets it), marked allow_nonphysical (any shape may wrap, DMAs may go to any
// offset); `tweak` may change any field before validation.
config::Topology MakeTopology(const std::vector<int>& shape, const std::vector<bool>& wraparound,
                              const std::function<void(config::Topology&)>& tweak = {});
// One v5e chip: a mesh of one device on axis 'x'.
dsl::Mesh OneChipMesh();
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

// The registered entry `name`; throws when there is none.
const kernels::KernelInfo& Entry(const std::string& name);
// `name`'s parameters with `values` set (the rest their defaults), checked, and functional
// or not as asked.
kernels::Params ParamsFor(const std::string& name, const kernels::ParamValues& values,
                          bool functional = true);

// A registered kernel's run, timed: what the schedule tests compare.
struct Measured {
  double seconds = 0;
  double exposed_fraction = 0;  // mean core time blocked in waits / run time
  double bound_seconds = 0;     // the kernel's own bound
};
// Runs `kernel` on `topology` with parameters `values`, timing only unless `functional`;
// fails the test if the kernel is unknown or the run does not complete.
Measured RunTimed(const std::string& kernel, const config::Topology& topology,
                  const kernels::ParamValues& values, bool functional = false);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// The JSON object or array on the last line of a --json run's output.
nlohmann::json LastLineJson(const std::string& out);

// Runs the built tpusim binary with `args` (shell-quoted by the caller).
CommandResult RunTpusim(const std::string& args);
// Runs `command` with /bin/sh, its stdout and stderr kept apart.
CommandResult RunShell(const std::string& command);

// a [m, k] @ b [k, n] on the host, summed in double, as `out_dtype`: a reference result.
dsl::Array HostDot(const dsl::Array& a, const dsl::Array& b, dsl::DType out_dtype);
// What `chip`'s compute model (sim/compute_models.h) gives `work` when nothing contends:
// its time, and the cycles it holds its unit for.
double ModelSeconds(const config::ChipConfig& chip, const base::Work& work);
uint64_t ModelCycles(const config::ChipConfig& chip, const base::Work& work);
// An XLA op of one dot: `flops` of `input` at `precision`, reading `read` and writing
// `written` bytes of HBM.
base::XlaOp XlaDotWork(double flops, base::MxuInput input, base::Precision precision, double read,
                       double written);

}  // namespace tpusim::testing
