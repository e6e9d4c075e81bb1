// A user's own binary: runs the kernel of all_gather_ring_left_chunked.cc and the program
// of gather_sum_program.cc (registered by linking them in) on a preset slice, checks the
// data on every chip, and prints each one's time against its bound.
//
//   user_kernel_demo [topology] [bytes] [chunks]     (default: v5e-4x4, 1M, 2)

#include <cstdio>
#include <exception>
#include <string>

#include "dsl/mesh.h"
#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "topologies/topology_loader.h"

namespace {

using namespace tpusim;

// 0 when `name` ran and its data is correct.
int RunOne(const char* name, const dsl::Mesh& mesh, const std::string& topology,
           const kernels::ParamValues& values) {
  const kernels::KernelInfo* info = kernels::Registry::Get().Find(name);
  if (!info) {
    std::fprintf(stderr, "%s is not registered: was its .cc linked in?\n", name);
    return 1;
  }
  // The entry's declared parameters: `values` checked against them, the rest defaults.
  const kernels::Params args = info->Bind(values);
  kernels::Workload w = info->make(mesh, args);
  const dsl::RunResult result = w.program.Run(w.inputs, dsl::RunOptions{});
  if (!result.ok) {
    std::fprintf(stderr, "%s failed: %s\n", name, result.error.c_str());
    return 1;
  }
  const dsl::Comparison check =
      dsl::CheckAgainstReference(w.program, result, w.expected, w.rtol, w.atol);
  const double seconds = static_cast<double>(result.time()) * 1e-12;
  const kernels::Bound bound = info->bound(mesh, args);
  std::printf("%s on %s, %s: %.3f us, bound %.3f us (%s), %.1f%% of bound, data %s\n", name,
              topology.c_str(), args.Describe().c_str(), seconds * 1e6, bound.seconds * 1e6,
              bound.formula.c_str(), 100 * bound.seconds / seconds,
              check.equal ? "correct" : "WRONG");
  if (!check.equal) std::fprintf(stderr, "%s\n", check.detail.c_str());
  return check.equal ? 0 : 1;
}

}  // namespace

// libsystemc defines main() and calls sc_main (docs/dsl.md, "Running").
extern "C" int sc_main(int argc, char** argv) {
  const std::string topology = argc > 1 ? argv[1] : "v5e-4x4";
  try {
    kernels::Registry::Get().CheckRegistrations();
    const dsl::Mesh mesh(topologies::LoadTopology(topology));
    // Text, as a command line gives it: "1M" or "1048576". chunks is the kernel's own.
    const kernels::ParamValues values = {
        {"axis", "x"}, {"bytes", argc > 2 ? argv[2] : "1M"}, {"chunks", argc > 3 ? argv[3] : "2"}};
    int failed = 0;
    for (const char* name : {"all_gather_ring_left_chunked", "gather_sum"})
      failed += RunOne(name, mesh, topology, values);
    return failed ? 1 : 0;
  } catch (const std::exception& e) {  // tpusim::Error: bad arguments, with the fix
    std::fprintf(stderr, "user_kernel_demo: %s\n", e.what());
    return 2;
  }
}
