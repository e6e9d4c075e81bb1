// Topology overrides (topologies/topology.proto): a link_override changes one link
// direction's bandwidth or latency, a chip_override one chip's memories or DMA engines, and
// nothing else. Each DMA here runs alone on its slice, so its time follows from the
// ChunkSchedule rules exactly: n chunks over links of chunk time D and latencies L_i land at
// n x D + sum of L_i (the source read and destination write overlap the links).

#include <gtest/gtest.h>

#include <vector>

#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;

constexpr uint64_t kChunk = 512 << 10;  // v5e's DMA chunk_bytes
constexpr uint64_t kBytes = 8 * kChunk;
constexpr double kLink = 4.5e10;         // v5e ICI, one way
constexpr Picoseconds kHop = 1'000'000;  // 1 us
constexpr double kHbm = 8.19e11;

DmaSpec Remote(ChipId from, ChipId to) {
  return DmaSpec{from, MemorySpace::kHbm, to, MemorySpace::kHbm, kBytes};
}
DmaSpec LocalCopy(ChipId chip) {
  return DmaSpec{chip, MemorySpace::kHbm, chip, MemorySpace::kHbm, kBytes};
}

// A line of four chips, with `tweak`'s overrides.
config::Topology Line(const std::function<void(config::Topology&)>& tweak = {}) {
  return testing::MakeTopology({4}, {false}, tweak);
}

void OverrideLink(config::Topology& t, uint32_t chip, const char* direction, double bandwidth,
                  double latency_ns = -1) {
  auto* o = t.add_link_override();
  o->add_chip(chip);
  o->set_direction(direction);
  if (bandwidth > 0) o->set_bandwidth_bytes_per_s(bandwidth);
  if (latency_ns >= 0) o->set_latency_ns(latency_ns);
}

// Each DMA's time, every DMA alone on its slice.
std::vector<Picoseconds> EachAlone(const config::Topology& topology,
                                   const std::vector<DmaSpec>& dmas) {
  std::vector<Picoseconds> times;
  for (const DmaSpec& dma : dmas)
    times.push_back(TimeDma(topology, dma, TimingOnly()));
  return times;
}

TEST(LinkOverride, HalvingOneLinksBandwidthDoublesTheTimeOnlyOfWhatCrossesIt) {
  const auto slow = Line([](config::Topology& t) { OverrideLink(t, 1, "x+", kLink / 2); });
  // Over the slow link; then beside it, the other way over it, and through it.
  const std::vector<DmaSpec> dmas = {Remote(1, 2), Remote(0, 1), Remote(2, 3), Remote(2, 1),
                                     Remote(0, 3)};
  const auto before = EachAlone(Line(), dmas);
  const auto after = EachAlone(slow, dmas);
  const Picoseconds chunk = base::TransferTime(kChunk, kLink);
  const Picoseconds slow_chunk = base::TransferTime(kChunk, kLink / 2);
  EXPECT_EQ(before[0], 8 * chunk + kHop);
  EXPECT_EQ(after[0], 8 * slow_chunk + kHop);
  EXPECT_NEAR(static_cast<double>(after[0] - kHop) / static_cast<double>(before[0] - kHop), 2.0,
              1e-6);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ(after[2], before[2]);
  EXPECT_EQ(after[3], before[3]) << "the x- link between the same chips is another link";
  // 0 -> 3 is paced by its slowest link.
  EXPECT_EQ(before[4], 8 * chunk + 3 * kHop);
  EXPECT_EQ(after[4], 8 * slow_chunk + 3 * kHop);
}

TEST(LinkOverride, ALatencyOverrideDelaysOnlyRoutesThroughThatLink) {
  const auto late = Line([](config::Topology& t) { OverrideLink(t, 1, "x+", 0, 5000); });
  const std::vector<DmaSpec> dmas = {Remote(0, 3), Remote(1, 2), Remote(0, 1),
                                     Remote(2, 3), Remote(3, 0), Remote(2, 1)};
  const auto before = EachAlone(Line(), dmas);
  const auto after = EachAlone(late, dmas);
  EXPECT_EQ(after[0] - before[0], 4 * kHop);  // 5 us instead of 1 us on the middle link
  EXPECT_EQ(after[1] - before[1], 4 * kHop);
  for (size_t i = 2; i < dmas.size(); ++i)
    EXPECT_EQ(after[i], before[i]) << "DMA " << i;
}

TEST(ChipOverride, AChipsHbmBandwidthChangesOnlyThatChipsCopies) {
  const auto slow_hbm = Line([](config::Topology& t) {
    auto* o = t.add_chip_override();
    o->add_chip(1);
    o->mutable_hbm()->set_bandwidth_bytes_per_s(kHbm / 2);
  });
  const std::vector<DmaSpec> dmas = {LocalCopy(1), LocalCopy(0), LocalCopy(2)};
  const auto before = EachAlone(Line(), dmas);
  const auto after = EachAlone(slow_hbm, dmas);
  // A copy within one memory reads and writes each chunk through its one port.
  EXPECT_EQ(before[0], 8 * base::TransferTime(2 * kChunk, kHbm));
  EXPECT_EQ(after[0], 8 * base::TransferTime(2 * kChunk, kHbm / 2));
  EXPECT_NEAR(static_cast<double>(after[0]) / static_cast<double>(before[0]), 2.0, 1e-6);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ(after[2], before[2]);
}

TEST(ChipOverride, AChipsDmaEnginesChangeOnlyThatChipsConcurrency) {
  // With one engine, chip 1's second DMA waits until the first has left; chip 2 keeps eight
  // and sends both at once, each on its own link.
  const auto one_engine = Line([](config::Topology& t) {
    auto* o = t.add_chip_override();
    o->add_chip(1);
    o->mutable_dma()->set_engines(1);
  });
  const Picoseconds chunk = base::TransferTime(kChunk, kLink);
  const auto serial = TimeDmas(one_engine, {Remote(1, 0), Remote(1, 2)}, TimingOnly());
  EXPECT_EQ(serial[0], 8 * chunk + kHop);
  EXPECT_EQ(serial[1], 16 * chunk + kHop);
  const auto parallel = TimeDmas(one_engine, {Remote(2, 1), Remote(2, 3)}, TimingOnly());
  EXPECT_EQ(parallel[0], 8 * chunk + kHop);
  EXPECT_EQ(parallel[1], 8 * chunk + kHop);
}

// RunConfig::chip_slowdown builds on the same per-chip parameters: a chip slowed by F copies
// as a chip_override with its memories at bandwidth / F does, and waits F times its DMA
// issue latency; the other chips keep theirs. RunConfig::link_slowdown is a link_override of
// the link's bandwidth / F.
TEST(ChipOverride, ChipSlowdownIsAnOverrideOfItsMemoriesAndDmaIssue) {
  constexpr double kIssueNs = 500;
  const auto with_issue = [](config::Topology& t) {
    t.mutable_chip()->mutable_dma()->set_issue_latency_ns(kIssueNs);
  };
  const std::vector<DmaSpec> dmas = {LocalCopy(1), LocalCopy(2)};
  base::EngineOptions slowed = TimingOnly();
  slowed.chip_slowdown = {1, 4};
  std::vector<Picoseconds> after;
  for (const DmaSpec& dma : dmas)
    after.push_back(TimeDma(Line(with_issue), dma, slowed));
  const Picoseconds issue = base::NanosecondsToTime(kIssueNs);
  EXPECT_EQ(after[0], 4 * issue + 8 * base::TransferTime(2 * kChunk, kHbm / 4));
  EXPECT_EQ(after[1], issue + 8 * base::TransferTime(2 * kChunk, kHbm));

  base::EngineOptions slow_link = TimingOnly();
  slow_link.link_slowdown = {{1, "x+", 2}};
  const auto overridden = Line([](config::Topology& t) { OverrideLink(t, 1, "x+", kLink / 2); });
  for (const DmaSpec& dma : {Remote(1, 2), Remote(1, 0), Remote(0, 3)})
    EXPECT_EQ(TimeDma(Line(), dma, slow_link), TimeDma(overridden, dma, TimingOnly()));
}

}  // namespace
}  // namespace tpusim::modules
