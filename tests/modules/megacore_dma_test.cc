// DMAs between the VMEMs of a megacore chip's two cores (v5p: two TensorCores a chip, each
// with its own VMEM, docs/time-model.md "Data movement"). A copy within one VMEM passes its
// port twice (read and write); a copy from one core's VMEM to the other's reads one port and
// writes the other, each once, the two streaming together as any two memories of a chip do.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/time.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "topologies/topology_loader.h"

namespace tpusim::modules {
namespace {

using base::BufferHandle;
using base::CorePort;
using base::MemorySpace;

constexpr double kVmemBandwidth = 6.083e13;  // the v5p preset's, docs/references.md §1
constexpr uint64_t kChunk = 524288;          // chip.dma.chunk_bytes of the presets
constexpr uint64_t kBytes = 16 * kChunk;

// A VMEM to VMEM copy on chip 0, from core `from`'s VMEM to core `to`'s, all started at once.
struct VmemCopy {
  int from = 0;
  int to = 0;
};

// How long each copy takes from its start until it lands, on a v5p chip.
std::vector<Picoseconds> TimeCopies(const std::vector<VmemCopy>& copies) {
  sim::Simulation simulation(topologies::ParseTopology(topologies::PresetText("v5p-2x2x1"), "v5p"),
                             TimingOnly());
  std::vector<Picoseconds> took(copies.size(), 0);
  const base::RunOutcome outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() != 0) return;
    // Each core's VMEM buffers are made on a thread of that core.
    const auto allocate = [&](int on, const std::string& label) {
      BufferHandle made;
      const auto body = [&](CorePort& port) {
        made = port.Allocate(MemorySpace::kVmem, kBytes, label, {});
      };
      if (on == 0) {
        body(core);
      } else {
        core.Join(core.SpawnOnCore(on, "allocate " + label, body));
      }
      return made;
    };
    std::vector<base::DmaRequest> requests(copies.size());
    for (size_t i = 0; i < copies.size(); ++i) {
      const std::string name = "copy " + std::to_string(i);
      base::ByteBox whole;
      whole.counts = {kBytes};
      whole.strides = {1};
      requests[i].source = {allocate(copies[i].from, name + " source"), whole};
      requests[i].destination = {allocate(copies[i].to, name + " destination"), whole};
      requests[i].recv_semaphore = core.AddSemaphore(base::SemaphoreKind::kDma, name);
      requests[i].label = name;
    }
    std::vector<CorePort::ActivityId> activities;
    for (size_t i = 0; i < copies.size(); ++i) {
      activities.push_back(core.Spawn("copy " + std::to_string(i), [&, i](CorePort& port) {
        const Picoseconds start = port.Now();
        port.StartDma(requests[i]);
        port.Wait(requests[i].recv_semaphore, static_cast<int64_t>(kBytes),
                  base::WaitKind::kDmaRecv, "copy");
        took[i] = port.Now() - start;
      }));
    }
    for (CorePort::ActivityId activity : activities)
      core.Join(activity);
  });
  EXPECT_TRUE(outcome.ok) << outcome.error;
  return took;
}

// Each chunk holds a VMEM port for its bytes over the port's bandwidth (docs/time-model.md).
Picoseconds OnePort(uint64_t bytes_per_chunk) {
  return static_cast<Picoseconds>(kBytes / kChunk) *
         base::TransferTime(bytes_per_chunk, kVmemBandwidth);
}

TEST(MegacoreDma, ACopyBetweenTheCoresVmemsTakesHalfACopyWithinOneVmem) {
  const std::vector<Picoseconds> within = TimeCopies({{0, 0}});
  const std::vector<Picoseconds> across = TimeCopies({{0, 1}});
  const std::vector<Picoseconds> back = TimeCopies({{1, 0}});
  // Within one VMEM a chunk reads and writes through the one port: twice its bytes.
  EXPECT_NEAR(static_cast<double>(within[0]), static_cast<double>(OnePort(2 * kChunk)), 16.0);
  // Across, the source's port reads while the destination's writes: once each, together.
  EXPECT_NEAR(static_cast<double>(across[0]), static_cast<double>(OnePort(kChunk)), 16.0);
  EXPECT_EQ(back[0], across[0]);
}

// The copy across books the destination core's port too: beside a copy within that core's
// VMEM, the port carries both (3 x the bytes), so the later of the two lands only then. Were
// the destination's port left out, both would be done after the copy within (2 x the bytes).
TEST(MegacoreDma, ACopyIntoTheOtherCoresVmemSharesThatCoresPort) {
  const std::vector<Picoseconds> took = TimeCopies({{0, 1}, {1, 1}});
  const Picoseconds last = std::max(took[0], took[1]);
  EXPECT_NEAR(static_cast<double>(last), static_cast<double>(OnePort(3 * kChunk)), 32.0);
  // And the copy across still moves its bytes no faster than one port's bandwidth.
  EXPECT_GE(took[0], OnePort(kChunk));
}

}  // namespace
}  // namespace tpusim::modules
