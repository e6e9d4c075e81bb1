// The host cost of one DMA (issue 25: under 1 us), Google Benchmark; not in ctest:
// `build/benchmarks/dma_issue_benchmarks` (or `make bench`).
//
// A kernel on every chip of v5e-2x2 starts `dmas` small local copies (256 bytes each, one
// chunk), then waits for them all, timing-only. The counter `per_dma` is the run's host time
// divided by the DMAs it issued: the kernel's descriptor (slicing the refs, resolving the
// semaphore), the engine's checks and queueing, the chunk's booking and its calendar events,
// and the wait. The slice's set-up is in it too, so the larger argument shows the per-DMA cost
// with the set-up spread thin.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;

constexpr int64_t kElementsPerDma = 64;  // 256 bytes of f32: one chunk, one hop

ShardMap ManySmallCopies(int64_t dmas) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "copied")};
  PallasCall call =
      pallas_call("many_small_copies",
                  [dmas](Kernel& k, const Refs& r) {
                    std::vector<AsyncCopy> copies;
                    copies.reserve(static_cast<size_t>(dmas));
                    for (int64_t i = 0; i < dmas; ++i) {
                      const Slice part = ds(i * kElementsPerDma, kElementsPerDma);
                      copies.push_back(k.async_copy(r[0].at(part), r[1].at(part), r[2]));
                      copies.back().start();
                    }
                    for (AsyncCopy& copy : copies)
                      copy.wait();
                  },
                  grid, {{{dmas * kElementsPerDma}, DType::kF32}});
  return shard_map(Mesh(topologies::LoadTopology("v5e-2x2")), {P{"x"}}, {P{"x"}}, call);
}

void BM_DmaIssue(benchmark::State& state) {
  const int64_t dmas = state.range(0);
  const ShardMap program = ManySmallCopies(dmas);
  const int64_t chips = 4;
  const Array x = Array::Placeholder({2 * dmas * kElementsPerDma}, DType::kF32);
  RunOptions options;
  options.functional = false;
  int64_t issued = 0;
  for (auto _ : state) {
    const RunResult result = program.Run({x}, options);
    if (!result.ok) state.SkipWithError(result.error.c_str());
    issued += static_cast<int64_t>(result.stats.dmas);
  }
  if (issued != state.iterations() * dmas * chips)
    state.SkipWithError("the run issued another number of DMAs than the kernel starts");
  // Seconds per DMA: the rate of DMAs, inverted.
  state.counters["per_dma"] = benchmark::Counter(
      static_cast<double>(issued), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["dmas"] =
      benchmark::Counter(static_cast<double>(issued), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_DmaIssue)
    ->ArgName("dmas_per_chip")
    ->Arg(256)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpusim
