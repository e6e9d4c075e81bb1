// Multi-slice runs (docs/model.md, "Multi-slice"): a collective over the slice axis crosses the
// data-center network, whose bottleneck is each host's NIC, shared by the host's chips.

#include <gtest/gtest.h>

#include <string>

#include "dsl/mesh.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;

struct Timed {
  double seconds = 0;
  base::RunStats stats;
};

Timed RunOn(const config::Topology& topology, const std::string& kernel, const std::string& axis,
            uint64_t bytes) {
  const Mesh mesh(topology);
  const kernels::KernelInfo* info = kernels::Registry::Get().Find(kernel);
  EXPECT_NE(info, nullptr) << kernel;
  if (!info) return {};
  kernels::Workload w = info->make(
      mesh, testing::ParamsFor(kernel, {{"axis", axis}, {"bytes", bytes}}, /*functional=*/false));
  RunOptions options;
  options.functional = false;
  const RunResult result = w.program.Run(w.inputs, options);
  EXPECT_TRUE(result.ok) << result.error;
  return {static_cast<double>(result.time()) * 1e-12, result.stats};
}

// Ring all-reduce of V bytes per chip over an axis of X slices: the reduce-scatter sends
// (X-1)/X V from every chip and the all-gather as much again, 2 (X-1)/X V in all, every byte
// to a chip of another slice. A host's chips_per_host chips share its NIC (B bytes/s each
// way), so the NIC carries chips_per_host times that:
//   T = 2 (X-1)/X V chips_per_host / B.
// With X = 2 that is V chips_per_host / B. On top come one DCN latency and a signal per ring
// step, the kernel's launch and its start barrier: 5% covers them at V = 16 MiB.
TEST(DcnFidelity, AllReduceOverTwoSlicesIsBoundByTheHostNics) {
  const auto topology = topologies::WithSlices(topologies::LoadTopology("v5e-2x4"), 2, "v5e-2x4");
  const double nic = topology.dcn().nic_bandwidth_bytes_per_s();
  const double per_host = topology.dcn().chips_per_host();
  const double v = 16.0 * (1 << 20);
  const double x = 2;
  const double bound = 2 * (x - 1) / x * v * per_host / nic;
  const Timed t = RunOn(topology, "all_reduce_ring", "slice", static_cast<uint64_t>(v));
  EXPECT_GE(t.seconds, bound);
  EXPECT_LE(t.seconds, 1.05 * bound) << "bound " << bound;
  // Every NIC port moved the chips' bytes, and no ICI link carried any.
  ASSERT_EQ(t.stats.nics.size(), 4u);  // 2 hosts x (out, in)
  for (const auto& port : t.stats.nics)
    EXPECT_EQ(static_cast<double>(port.bytes), per_host * v) << port.name;
  for (const auto& link : t.stats.links)
    EXPECT_EQ(link.bytes, 0u) << link.name;
}

// The program layer's psum over the slice axis (kernels/lax) crosses the DCN too, and its
// planner's algorithm meets the same NIC bound within the same 5%.
TEST(DcnFidelity, LaxPsumOverTwoSlicesIsBoundByTheHostNics) {
  const auto topology = topologies::WithSlices(topologies::LoadTopology("v5e-2x4"), 2, "v5e-2x4");
  const double v = 16.0 * (1 << 20);
  const double bound =
      v * topology.dcn().chips_per_host() / topology.dcn().nic_bandwidth_bytes_per_s();
  const Timed t = RunOn(topology, "lax/psum", "slice", static_cast<uint64_t>(v));
  EXPECT_GE(t.seconds, bound);
  EXPECT_LE(t.seconds, 1.05 * bound) << "bound " << bound;
}

// Within a slice nothing changes: the same all-reduce over the ICI axis of a 2-slice topology
// takes as long as on one slice, and the NICs stay idle.
TEST(DcnFidelity, AnIciAxisOfAMultiSliceTopologyRunsAsOnOneSlice) {
  const auto one = topologies::LoadTopology("v5e-4x4");
  const auto two = topologies::WithSlices(one, 2, "v5e-4x4");
  const uint64_t v = 4 << 20;
  const Timed single = RunOn(one, "all_reduce_ring", "x", v);
  const Timed sliced = RunOn(two, "all_reduce_ring", "x", v);
  EXPECT_EQ(sliced.seconds, single.seconds);
  for (const auto& port : sliced.stats.nics)
    EXPECT_EQ(port.bytes, 0u) << port.name;
}

}  // namespace
}  // namespace tpusim
