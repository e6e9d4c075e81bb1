// Layer 1: DMA timing against the config, on small kernels written in the DSL.

#include <gtest/gtest.h>

#include "base/work.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

constexpr double kLinkBandwidth = 4.5e10;  // v5e, docs/references.md §2
constexpr double kHopLatency = 1e-6;       // docs/references.md §2
constexpr double kHbmBandwidth = 8.19e11;  // v5e, docs/references.md §1

struct Transfer {
  int from;
  int to;
};

// Every transfer moves `bytes` from its sender's x to its receiver's out, all at once; devices
// count along mesh axis `axis`.
ShardMap PointToPoint(const config::Topology& topology, int64_t bytes,
                      std::vector<Transfer> transfers, const std::string& axis = "x") {
  const int count = static_cast<int>(transfers.size());
  KernelFn body = [transfers, bytes](Kernel& k, const Refs& refs) {
    const Ref &x = refs[0], &out = refs[1], &send = refs[2], &recv = refs[3];
    for (size_t i = 0; i < transfers.size(); ++i) {
      if (transfers[i].from != k.device_id()) continue;
      const int slot = static_cast<int>(i);
      AsyncCopy copy =
          k.async_remote_copy(x.at(ds(slot * bytes, bytes)), out.at(ds(slot * bytes, bytes)),
                              send.at(slot), recv.at(slot), DeviceId::Logical(transfers[i].to));
      copy.start();
    }
    for (size_t i = 0; i < transfers.size(); ++i) {
      const int slot = static_cast<int>(i);
      AsyncCopy d =
          k.async_remote_copy(x.at(ds(slot * bytes, bytes)), out.at(ds(slot * bytes, bytes)),
                              send.at(slot), recv.at(slot), DeviceId::Logical(0));
      if (transfers[i].from == k.device_id()) d.wait_send();
      if (transfers[i].to == k.device_id()) d.wait_recv();
    }
  };
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({count}, "send"), ScratchSpec::DMA({count}, "recv")};
  auto call = pallas_call("point_to_point", body, grid, {{{count * bytes}, DType::kInt8}});
  return shard_map(Mesh(topology), {P{axis}}, {P{axis}}, call);
}

RunOptions TimingOnly() {
  RunOptions options;
  options.functional = false;
  return options;
}

double Seconds(base::Picoseconds t) {
  return static_cast<double>(t) * 1e-12;
}

TEST(DmaTiming, NeighbourDmaTakesLatencyPlusBytesOverBandwidth) {
  const auto topology = testing::MakeTopology({8}, {false});
  const int64_t bytes = 8 << 20;
  const ShardMap program = PointToPoint(topology, bytes, {{0, 1}});
  const Array input = Array::Random({8 * bytes}, DType::kInt8, 1);
  auto run = testing::RunAndCheckTrace(program, {input});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const double expected = kHopLatency + bytes / kLinkBandwidth;
  EXPECT_NEAR(Seconds(run.result.time()), expected, 0.005 * expected);
  // And device 0's block arrived on device 1.
  EXPECT_TRUE(CompareExact(run.result.device_outputs[0][1], input.Slice({0}, {bytes})).equal);
}

// The two chiplets of a chip are two devices joined by the die-to-die link
// (config::ChipletConfig): a DMA between them crosses it alone, at its own bandwidth and
// latency, and no ICI link.
TEST(DmaTiming, ADmaBetweenTheChipletsOfAChipTakesD2dLatencyPlusBytesOverD2dBandwidth) {
  constexpr double kD2dBandwidth = 5.4e11;
  constexpr double kD2dLatency = 100e-9;
  const auto topology = testing::MakeTopology({1}, {false}, [&](config::Topology& t) {
    t.mutable_chiplets()->set_d2d_bandwidth_bytes_per_s(kD2dBandwidth);
    t.mutable_chiplets()->set_d2d_latency_ns(kD2dLatency * 1e9);
  });
  ASSERT_EQ(topology.mesh().shape_size(), 2);
  const int64_t bytes = 8 << 20;
  const ShardMap program = PointToPoint(topology, bytes, {{0, 1}}, "chiplet");
  const Array input = Array::Random({2 * bytes}, DType::kInt8, 1);
  auto run = testing::RunAndCheckTrace(program, {input});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const double expected = kD2dLatency + bytes / kD2dBandwidth;
  EXPECT_NEAR(Seconds(run.result.time()), expected, 0.005 * expected);
  EXPECT_TRUE(CompareExact(run.result.device_outputs[0][1], input.Slice({0}, {bytes})).equal);
  uint64_t d2d_bytes = 0;
  for (const auto& link : run.result.stats.links) {
    if (link.name.find(" D2D ") != std::string::npos) d2d_bytes += link.bytes;
  }
  EXPECT_EQ(d2d_bytes, static_cast<uint64_t>(bytes));
}

TEST(DmaTiming, EachHopAddsItsLatency) {
  const auto topology = testing::MakeTopology({8}, {false});
  const int64_t bytes = 4096;
  // The kernel's one grid step pays its loop control (docs/time-model.md).
  const double step =
      static_cast<double>(testing::ModelCycles(topology.chip(), base::GridStep{false})) /
      topology.chip().clock_hz();
  for (int hops : {1, 2, 3, 7}) {
    const ShardMap program = PointToPoint(topology, bytes, {{0, hops}});
    const auto result = program.Run({Array::Random({8 * bytes}, DType::kInt8, 1)}, {});
    ASSERT_TRUE(result.ok) << result.error;
    const double expected = step + hops * kHopLatency + bytes / kLinkBandwidth;
    EXPECT_NEAR(Seconds(result.time()), expected, 1e-12 * 10) << hops << " hops";
  }
}

TEST(DmaTiming, TwoDmasSharingOneLinkEachSeeHalfTheBandwidth) {
  const auto topology = testing::MakeTopology({8}, {false});
  const int64_t bytes = 16 << 20;
  // 0 -> 2 and 1 -> 3 both cross the link 1 -> 2.
  const ShardMap program = PointToPoint(topology, bytes, {{0, 2}, {1, 3}});
  auto run = testing::RunAndCheckTrace(program, {Array::Random({16 * bytes}, DType::kInt8, 2)});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const double alone = bytes / kLinkBandwidth;
  const double chunk = 524288 / kLinkBandwidth;
  const double finish2 = Seconds(run.result.stats.cores[2].finish);
  const double finish3 = Seconds(run.result.stats.cores[3].finish);
  // Fair interleaving: they finish together (within a chunk), at about twice the time.
  EXPECT_NEAR(finish2, finish3, 2 * chunk);
  EXPECT_NEAR(finish2, 2 * alone, 0.02 * 2 * alone);
  EXPECT_NEAR(finish3, 2 * alone, 0.02 * 2 * alone);
  // Every byte of both crossed the shared link.
  for (const auto& link : run.result.stats.links) {
    if (link.name == "chip 1 (x=1) ICI x+") {
      EXPECT_EQ(link.bytes, static_cast<uint64_t>(2 * bytes));
    }
  }
}

TEST(DmaTiming, ALongRouteContendsWithNeighbourTrafficOnTheLinkItShares) {
  const auto topology = testing::MakeTopology({8}, {false});
  const int64_t bytes = 16 << 20;
  const double alone = bytes / kLinkBandwidth;
  // 0 -> 3 crosses 0->1, 1->2 and 2->3; 1 -> 2 crosses only 1->2, the middle link.
  const auto solo_long = PointToPoint(topology, bytes, {{0, 3}})
                             .Run({Array::Placeholder({8 * bytes}, DType::kInt8)}, TimingOnly());
  const auto solo_short = PointToPoint(topology, bytes, {{1, 2}})
                              .Run({Array::Placeholder({8 * bytes}, DType::kInt8)}, TimingOnly());
  const auto both = PointToPoint(topology, bytes, {{0, 3}, {1, 2}})
                        .Run({Array::Placeholder({16 * bytes}, DType::kInt8)}, TimingOnly());
  ASSERT_TRUE(solo_long.ok && solo_short.ok && both.ok)
      << solo_long.error << solo_short.error << both.error;
  // Alone: three latencies (or one) plus bytes over the link bandwidth.
  EXPECT_NEAR(Seconds(solo_long.time()), 3 * kHopLatency + alone, 0.01 * alone);
  EXPECT_NEAR(Seconds(solo_short.time()), kHopLatency + alone, 0.01 * alone);
  // Together the middle link carries both, so each arrives at about twice the bytes time
  // (the long one's unshared links are paced by the shared one). Tolerance: 3%.
  const double long_done = Seconds(both.stats.cores[3].finish);
  const double short_done = Seconds(both.stats.cores[2].finish);
  EXPECT_NEAR(long_done, 3 * kHopLatency + 2 * alone, 0.03 * 2 * alone);
  EXPECT_NEAR(short_done, kHopLatency + 2 * alone, 0.03 * 2 * alone);
  EXPECT_GT(long_done / Seconds(solo_long.time()), 1.9);
  EXPECT_GT(short_done / Seconds(solo_short.time()), 1.9);
  for (const auto& link : both.stats.links) {
    if (link.name == "chip 0 (x=0) ICI x+" || link.name == "chip 2 (x=2) ICI x+") {
      EXPECT_EQ(link.bytes, static_cast<uint64_t>(bytes)) << link.name;
    }
    if (link.name == "chip 1 (x=1) ICI x+") {
      EXPECT_EQ(link.bytes, static_cast<uint64_t>(2 * bytes)) << link.name;
    }
  }
}

TEST(DmaTiming, LocalHbmCopyReadsAndWritesThroughTheHbmPort) {
  const auto topology = testing::MakeTopology({1}, {false});
  const int64_t bytes = 64 << 20;
  const ShardMap program = PointToPoint(topology, bytes, {{0, 0}});
  const auto result = program.Run({Array::Placeholder({bytes}, DType::kInt8)}, TimingOnly());
  ASSERT_TRUE(result.ok) << result.error;
  // A copy reads and writes every byte: 2 x bytes through a port of the HBM's bandwidth.
  const double expected = 2.0 * bytes / kHbmBandwidth;
  EXPECT_NEAR(Seconds(result.time()), expected, 0.03 * expected);
}

TEST(DmaTiming, TimingOnlyModeGivesTheSameTime) {
  const auto topology = testing::MakeTopology({4}, {false});
  const int64_t bytes = 1 << 20;
  const ShardMap program = PointToPoint(topology, bytes, {{0, 3}, {1, 2}, {3, 0}});
  const auto functional = program.Run({Array::Random({12 * bytes}, DType::kInt8, 3)}, {});
  const auto timing = program.Run({Array::Placeholder({12 * bytes}, DType::kInt8)}, TimingOnly());
  ASSERT_TRUE(functional.ok && timing.ok) << functional.error << timing.error;
  EXPECT_EQ(functional.time(), timing.time());
  EXPECT_EQ(functional.stats.events, timing.stats.events);
  EXPECT_TRUE(timing.outputs.empty());
}

}  // namespace
}  // namespace tpusim
