// A user's own binary: runs the kernel of all_gather_ring_left_chunked.cc (registered by
// linking it in) on a preset slice, checks the data on every chip, and prints the time
// against the kernel's bound.
//
//   user_kernel_demo [topology] [bytes]     (default: v5e-4x4, 1 MiB)

#include <cstdio>
#include <cstdlib>
#include <string>

#include "dsl/mesh.h"
#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "sim/errors.h"
#include "topologies/topology_loader.h"

// libsystemc defines main() and calls sc_main (docs/dsl.md, "Running").
extern "C" int sc_main(int argc, char** argv) {
  using namespace tpusim;
  const std::string topology = argc > 1 ? argv[1] : "v5e-4x4";
  const char* kernel = "all_gather_ring_left_chunked";
  try {
    kernels::Registry::Get().CheckNoDuplicates();
    const kernels::KernelInfo* info = kernels::Registry::Get().Find(kernel);
    if (!info) {
      std::fprintf(stderr, "%s is not registered: was its .cc linked in?\n", kernel);
      return 1;
    }
    const dsl::Mesh mesh(topologies::LoadTopology(topology));
    kernels::CollectiveArgs args;
    args.axis = "x";
    args.bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1 << 20;

    kernels::Workload w = info->make(mesh, args);
    const dsl::RunResult result = w.program.Run(w.inputs, dsl::RunOptions{});
    if (!result.ok) {
      std::fprintf(stderr, "%s failed: %s\n", kernel, result.error.c_str());
      return 1;
    }
    const dsl::Comparison check =
        dsl::CheckAgainstReference(w.program, result, w.expected, w.rtol, w.atol);
    const double seconds = static_cast<double>(result.time()) * 1e-12;
    const kernels::Bound bound = info->bound(mesh, args);
    std::printf("%s on %s, %llu bytes: %.3f us, bound %.3f us (%s), %.1f%% of bound, data %s\n",
                kernel, topology.c_str(), static_cast<unsigned long long>(args.bytes),
                seconds * 1e6, bound.seconds * 1e6, bound.formula.c_str(),
                100 * bound.seconds / seconds, check.equal ? "correct" : "WRONG");
    if (!check.equal) std::fprintf(stderr, "%s\n", check.detail.c_str());
    return check.equal ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", kernel, e.what());
    return 2;
  }
}
