// A user's own binary: runs the kernel of all_gather_ring_left_chunked.cc and the program
// of gather_sum_program.cc (registered by linking them in) on a preset slice, checks the
// data on every chip, and prints each one's time against its bound.
//
//   user_kernel_demo [topology] [bytes]     (default: v5e-4x4, 1 MiB)

#include <cstdio>
#include <cstdlib>
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
           const kernels::CollectiveArgs& args) {
  const kernels::KernelInfo* info = kernels::Registry::Get().Find(name);
  if (!info) {
    std::fprintf(stderr, "%s is not registered: was its .cc linked in?\n", name);
    return 1;
  }
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
  std::printf("%s on %s, %llu bytes: %.3f us, bound %.3f us (%s), %.1f%% of bound, data %s\n", name,
              topology.c_str(), static_cast<unsigned long long>(args.bytes), seconds * 1e6,
              bound.seconds * 1e6, bound.formula.c_str(), 100 * bound.seconds / seconds,
              check.equal ? "correct" : "WRONG");
  if (!check.equal) std::fprintf(stderr, "%s\n", check.detail.c_str());
  return check.equal ? 0 : 1;
}

}  // namespace

// libsystemc defines main() and calls sc_main (docs/dsl.md, "Running").
extern "C" int sc_main(int argc, char** argv) {
  const std::string topology = argc > 1 ? argv[1] : "v5e-4x4";
  try {
    kernels::Registry::Get().CheckNoDuplicates();
    const dsl::Mesh mesh(topologies::LoadTopology(topology));
    kernels::CollectiveArgs args;
    args.axis = "x";
    args.bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1 << 20;
    int failed = 0;
    for (const char* name : {"all_gather_ring_left_chunked", "gather_sum"})
      failed += RunOne(name, mesh, topology, args);
    return failed ? 1 : 0;
  } catch (const std::exception& e) {  // tpusim::Error: bad arguments, with the fix
    std::fprintf(stderr, "user_kernel_demo: %s\n", e.what());
    return 2;
  }
}
