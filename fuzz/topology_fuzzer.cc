// libFuzzer target: a topology text through the loader's validation, the Mesh, and a
// short run of the slice it describes. A validated topology must build and run, or be
// refused with tpusim's own error; anything else (a sanitizer report, a foreign exception,
// running out of memory or time) is a bug. The overflow bugs of issue 14 sat past the parser.

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/errors.h"
#include "dsl/mesh.h"
#include "sim/simulation.h"
#include "topologies/topology_loader.h"

namespace {

using tpusim::base::ByteBox;
using tpusim::base::CorePort;
using tpusim::base::MemorySpace;

// Each core computes for one cycle and copies 4 KiB from HBM into VMEM: enough to reach
// the clock, the memories, the DMA engines and their chunking.
void SmallKernel(CorePort& core) {
  constexpr uint64_t kBytes = 4096;
  core.Compute(tpusim::base::ComputeUnit::kVpu, 1, "fuzz");
  tpusim::base::DmaRequest copy;
  const ByteBox box{0, {kBytes}, {1}, 1};
  copy.source = {core.Allocate(MemorySpace::kHbm, kBytes, "src", {}), box};
  copy.destination = {core.Allocate(MemorySpace::kVmem, kBytes, "dst", {}), box};
  copy.recv_semaphore = core.AddSemaphore(tpusim::base::SemaphoreKind::kDma, "copy");
  copy.label = "fuzz copy";
  core.StartDma(copy);
  core.Wait(copy.recv_semaphore, kBytes, tpusim::base::WaitKind::kDma, "fuzz copy");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const tpusim::config::Topology topology = tpusim::topologies::ParseTopology(text, "fuzz input");
    const tpusim::dsl::Mesh mesh(topology);
    tpusim::base::EngineOptions options;
    options.functional = false;
    options.time_limit = 1'000'000'000'000;  // 1 s of simulated time
    tpusim::sim::Simulation system(topology, options);
    (void)system.Run(SmallKernel);
  } catch (const tpusim::topologies::TopologyError&) {
  } catch (const tpusim::Error&) {
  }
  return 0;
}
