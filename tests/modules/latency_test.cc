// The latency terms of the model, each on its own (docs/time-model.md, "Latency"): a DMA's
// issue latency (chip.dma.issue_latency_ns), the per-hop latency of a link
// (ici.hop_latency_ns), the remote semaphore signal latency (ici.signal_latency_ns) and how
// routers forward chunks (ici.forwarding). Every topology here sets all four, so each test
// changes one and checks the exact picoseconds it adds.

#include <gtest/gtest.h>

#include <vector>

#include "sim/chunk.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::CorePort;
using base::MemorySpace;
using base::SemaphoreHandle;
using base::SemaphoreKind;
using base::TransferTime;

constexpr double kLinkBandwidth = 4.5e10;  // the v5e preset's, docs/references.md §2
constexpr double kHbmBandwidth = 8.19e11;  // the v5e preset's, docs/references.md §1
constexpr uint64_t kChunk = 524288;        // chip.dma.chunk_bytes of the presets

struct Latencies {
  double issue_ns = 0;
  double hop_ns = 1000;
  double signal_ns = 0;
  bool store_and_forward = false;
};

// A line of `chips` chips without wraparound, with exactly these latencies.
config::Topology Line(int chips, const Latencies& l) {
  return testing::MakeTopology({chips}, {false}, [&](config::Topology& t) {
    t.mutable_chip()->mutable_dma()->set_issue_latency_ns(l.issue_ns);
    t.mutable_ici()->set_hop_latency_ns(l.hop_ns);
    t.mutable_ici()->set_signal_latency_ns(l.signal_ns);
    t.mutable_ici()->set_forwarding(l.store_and_forward ? config::IciConfig::STORE_AND_FORWARD
                                                        : config::IciConfig::CUT_THROUGH);
  });
}

Picoseconds Ns(double ns) {
  return base::NanosecondsToTime(ns);
}

DmaSpec Local(uint64_t bytes) {
  return DmaSpec{0, MemorySpace::kHbm, 0, MemorySpace::kVmem, bytes};
}
DmaSpec Remote(ChipId to, uint64_t bytes) {
  return DmaSpec{0, MemorySpace::kHbm, to, MemorySpace::kHbm, bytes};
}

TEST(Latency, EveryDmaMovesItsFirstByteTheIssueLatencyAfterItStarts) {
  const uint64_t bytes = 65536;
  const Picoseconds read = TransferTime(bytes, kHbmBandwidth);
  // A copy within the chip: the HBM read, then the issue latency before it.
  EXPECT_EQ(TimeDma(Line(1, {}), Local(bytes), TimingOnly()), read);
  EXPECT_EQ(TimeDma(Line(1, {.issue_ns = 700}), Local(bytes), TimingOnly()), Ns(700) + read);
  // A DMA to another chip pays it once, not per hop.
  const Picoseconds remote = TransferTime(bytes, kLinkBandwidth) + 2 * Ns(1000);
  EXPECT_EQ(TimeDma(Line(3, {}), Remote(2, bytes), TimingOnly()), remote);
  EXPECT_EQ(TimeDma(Line(3, {.issue_ns = 700}), Remote(2, bytes), TimingOnly()), Ns(700) + remote);
}

TEST(Latency, DmasStartedTogetherIssueInParallelOnTheEnginesChannels) {
  // Two local copies of one chunk each, started at 0: each is issued 700 ns later, then they
  // share the HBM port, so the second lands two reads after the issue.
  const uint64_t bytes = 65536;
  const auto landed =
      TimeDmas(Line(1, {.issue_ns = 700}), {Local(bytes), Local(bytes)}, TimingOnly());
  const Picoseconds read = TransferTime(bytes, kHbmBandwidth);
  EXPECT_EQ(std::max(landed[0], landed[1]), Ns(700) + 2 * read);
  EXPECT_EQ(std::min(landed[0], landed[1]), Ns(700) + read);
}

TEST(Latency, EachLinkACutThroughChunkCrossesAddsItsHopLatencyOnce) {
  // Four chunks over three links: the link holds each for d, the head of the stream reaches
  // the destination three hop latencies after it left.
  const uint64_t bytes = 4 * kChunk;
  const Picoseconds d = TransferTime(kChunk, kLinkBandwidth);
  for (double hop_ns : {0.0, 250.0, 1000.0}) {
    EXPECT_EQ(TimeDma(Line(4, {.hop_ns = hop_ns}), Remote(3, bytes), TimingOnly()),
              4 * d + 3 * Ns(hop_ns))
        << hop_ns << " ns per hop";
  }
}

TEST(Latency, AStoreAndForwardRouterTakesInTheWholeChunkBeforeSendingItOn) {
  const Picoseconds d = TransferTime(kChunk, kLinkBandwidth);
  const Picoseconds write = TransferTime(kChunk, kHbmBandwidth);  // into the destination HBM
  const Latencies saf{.hop_ns = 1000, .store_and_forward = true};
  // One chunk over three links: each hop waits for the whole chunk, then the HBM takes it.
  EXPECT_EQ(TimeDma(Line(4, saf), Remote(3, kChunk), TimingOnly()), 3 * d + 3 * Ns(1000) + write);
  // Four chunks still stream at the link's rate: the last leaves the first link at 4d and
  // then waits at two routers.
  EXPECT_EQ(TimeDma(Line(4, saf), Remote(3, 4 * kChunk), TimingOnly()),
            (4 + 3 - 1) * d + 3 * Ns(1000) + write);
  // To a neighbour there is no router in between: the same as cut-through, but for the
  // write into HBM, which waits for the whole chunk.
  EXPECT_EQ(TimeDma(Line(2, saf), Remote(1, kChunk), TimingOnly()), d + Ns(1000) + write);
  EXPECT_EQ(TimeDma(Line(2, {.hop_ns = 1000}), Remote(1, kChunk), TimingOnly()), d + Ns(1000));
}

TEST(Latency, AReceiveSemaphoreCountsBytesFromAnotherChipTheSignalLatencyAfterTheyLand) {
  const uint64_t bytes = 65536;
  const Picoseconds remote = TransferTime(bytes, kLinkBandwidth) + Ns(1000);
  EXPECT_EQ(TimeDma(Line(2, {.signal_ns = 1500}), Remote(1, bytes), TimingOnly()),
            remote + Ns(1500));
  // A copy within the chip is seen at once.
  EXPECT_EQ(TimeDma(Line(2, {.signal_ns = 1500}), Local(bytes), TimingOnly()),
            TransferTime(bytes, kHbmBandwidth));
}

TEST(Latency, ARemoteSignalArrivesAfterItsHopsAndTheSignalLatencyALocalOneAtOnce) {
  const auto topology = Line(3, {.hop_ns = 400, .signal_ns = 1500});
  sim::Simulation simulation(topology, TimingOnly());
  std::vector<SemaphoreHandle> s;
  for (ChipId chip = 0; chip < 3; ++chip)
    s.push_back(simulation.AddSemaphore(chip, SemaphoreKind::kRegular, "s"));
  std::vector<Picoseconds> arrived(3, 0);
  const auto outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() == 0) {
      core.Signal(s[0], 1);  // its own: at once
      core.Signal(s[2], 1);  // two hops away
    }
    core.Wait(s[core.chip()], 1, base::WaitKind::kSemaphore, "s");
    arrived[core.chip()] = core.Now();
    if (core.chip() == 2) core.Signal(s[1], 1);  // one hop back
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  // Each link holds the signal's packet for its bytes; cut through, the links of one speed
  // overlap it, so a route adds it once (sim/chunk.h, kSignalBytes).
  const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth);
  EXPECT_EQ(arrived[0], 0u);
  EXPECT_EQ(arrived[2], 2 * Ns(400) + packet + Ns(1500));
  EXPECT_EQ(arrived[1], arrived[2] + Ns(400) + packet + Ns(1500));
}

TEST(Latency, TheSenderSeesItsBytesLeaveWithoutTheSignalLatency) {
  // wait_send counts bytes as they leave the source: the signal latency is the receiver's.
  const auto topology = Line(2, {.signal_ns = 1500});
  sim::Simulation simulation(topology, TimingOnly());
  const uint64_t bytes = 65536;
  const auto source = simulation.Allocate(0, MemorySpace::kHbm, bytes, "source");
  const auto destination = simulation.Allocate(1, MemorySpace::kHbm, bytes, "destination");
  const auto sent = simulation.AddSemaphore(0, SemaphoreKind::kDma, "sent");
  const auto received = simulation.AddSemaphore(1, SemaphoreKind::kDma, "received");
  std::vector<Picoseconds> done(2, 0);
  const auto outcome = simulation.Run([&](CorePort& core) {
    base::ByteBox box;
    box.counts = {bytes};
    box.strides = {1};
    if (core.chip() == 0) {
      base::DmaRequest request;
      request.source = {source, box};
      request.destination = {destination, box};
      request.has_send_semaphore = true;
      request.send_semaphore = sent;
      request.recv_semaphore = received;
      request.label = "dma";
      core.StartDma(request);
      core.Wait(sent, static_cast<int64_t>(bytes), base::WaitKind::kDmaSend, "sent");
    } else {
      core.Wait(received, static_cast<int64_t>(bytes), base::WaitKind::kDmaRecv, "received");
    }
    done[core.chip()] = core.Now();
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  const Picoseconds on_link = TransferTime(bytes, kLinkBandwidth);
  EXPECT_EQ(done[0], on_link);
  EXPECT_EQ(done[1], on_link + Ns(1000) + Ns(1500));
}

}  // namespace
}  // namespace tpusim::modules
