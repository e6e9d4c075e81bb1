// A user's program with a plain main(), as users of any C++ library write it: no sc_main,
// no SystemC call. It runs one kernel twice and exits 0 only when both runs completed with
// the shards gathered on every chip and the same simulated time.

#include <cstdio>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "topologies/topology_loader.h"

using namespace tpusim;
using namespace tpusim::dsl;

int main() {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copied")};
  PallasCall call = pallas_call("copy",
                                [](Kernel& k, const Refs& r) {
                                  AsyncCopy copy = k.async_copy(r[0], r[1], r[2]);
                                  copy.start();
                                  copy.wait();
                                },
                                grid, {{{256}, DType::kF32}});
  const ShardMap program =
      shard_map(Mesh(topologies::LoadTopology("v5e-2x2")), {P{"x"}}, {P{"x"}}, call);
  const Array x = Array::Random({2 * 256}, DType::kF32, 7);
  const RunResult first = program.Run({x}, RunOptions{});
  const RunResult second = program.Run({x}, RunOptions{});
  if (!first.ok || !second.ok) {
    std::fprintf(stderr, "run failed: %s\n", (first.ok ? second : first).error.c_str());
    return 1;
  }
  const bool same_data = first.outputs[0].bytes() == x.bytes();
  const bool same_time = first.stats.end_time == second.stats.end_time && first.stats.end_time > 0;
  std::printf("copy on v5e-2x2: %llu ps, data %s\n",
              static_cast<unsigned long long>(first.stats.end_time),
              same_data ? "correct" : "WRONG");
  return same_data && same_time ? 0 : 1;
}
