// A remote semaphore signal travels its route as a small transaction, hop by hop through the
// same link modules as a DMA's chunks (Router::SendSignal, docs/time-model.md "Signals on the
// route"): each link it crosses counts and traces it, a slowed link or a link model of the
// test's own times it, a DCN hop pays the DCN latency, and booking through TLM gives the same
// times as the direct path.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tlm_utils/simple_target_socket.h>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/chip.h"
#include "sim/chunk.h"
#include "sim/dma_engine.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/port_timing.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"
#include "traces/trace_sink.h"

namespace tpusim::modules {
namespace {

using base::CorePort;
using base::SemaphoreHandle;
using base::SemaphoreKind;
using base::TransferTime;
using ::testing::HasSubstr;

constexpr double kLinkBandwidth = 4.5e10;  // the v5e preset's, docs/references.md §2
constexpr double kHopNs = 1000;
constexpr double kSignalNs = 1500;

Picoseconds Ns(double ns) {
  return base::NanosecondsToTime(ns);
}

// A line of `chips` chips without wraparound: every hop 1 us, a remote signal 1.5 us more.
config::Topology Line(int chips) {
  return testing::MakeTopology({chips}, {false}, [](config::Topology& t) {
    t.mutable_ici()->set_hop_latency_ns(kHopNs);
    t.mutable_ici()->set_signal_latency_ns(kSignalNs);
  });
}

// Chip `from` signals a semaphore on chip `to` once at time 0; `to` waits for it. `before`
// may bind modules of the test's own (it keeps them in `kept`). One simulation runs at a time:
// each is gone when RunSignal returns, leaving what the test checks.
struct SignalRun {
  std::unique_ptr<sim::Simulation> simulation;
  // The test's own modules, bound into the slice: they go first, in their SystemC context.
  std::vector<std::unique_ptr<sc_core::sc_module>> kept;
  base::RunOutcome outcome;
  Picoseconds arrived = 0;  // when the wait ended (the semaphore changed)
  // How many signals crossed each outgoing link or NIC port out, by "chip:direction".
  std::map<std::string, uint64_t> signals;
};

SignalRun RunSignal(const config::Topology& topology, ChipId from, ChipId to,
                    base::EngineOptions options = TimingOnly(),
                    const std::function<void(SignalRun&)>& before = {}) {
  SignalRun run;
  run.simulation = std::make_unique<sim::Simulation>(topology, std::move(options));
  const SemaphoreHandle s = run.simulation->AddSemaphore(to, SemaphoreKind::kRegular, "s");
  if (before) before(run);
  run.outcome = run.simulation->Run([&](CorePort& core) {
    if (core.chip() == from) core.Signal(s, 1);
    if (core.chip() == to) {
      core.Wait(s, 1, base::WaitKind::kSemaphore, "s");
      run.arrived = core.Now();
    }
  });
  for (ChipId c = 0; c < run.simulation->slice().chips(); ++c) {
    for (const auto& link : run.simulation->slice().chip(c).links()) {
      if (link->port().signals() > 0)
        run.signals[std::to_string(c) + ":" + link->link().name] = link->port().signals();
    }
  }
  run.kept.clear();
  run.simulation.reset();
  return run;
}

TEST(SignalRoute, ARemoteSignalCrossesEachLinkOfItsRouteOnce) {
  SignalRun run = RunSignal(Line(4), 0, 3);
  ASSERT_TRUE(run.outcome.ok) << run.outcome.error;
  // Three hops, the packet's bytes once (cut through, links of one speed overlap it), then
  // the signal latency.
  const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth);
  EXPECT_EQ(run.arrived, 3 * Ns(kHopNs) + packet + Ns(kSignalNs));
  const std::map<std::string, uint64_t> expected = {{"0:x+", 1}, {"1:x+", 1}, {"2:x+", 1}};
  EXPECT_EQ(run.signals, expected);
  // Signals leave the links' DMA byte counts and busy times alone.
  for (const auto& link : run.outcome.stats.links) {
    EXPECT_EQ(link.bytes, 0u) << link.name;
    EXPECT_EQ(link.busy, 0u) << link.name;
  }
}

TEST(SignalRoute, TheRunsLinkStatsCountTheSignalsEachLinkCarried) {
  SignalRun run = RunSignal(Line(4), 0, 3);
  ASSERT_TRUE(run.outcome.ok) << run.outcome.error;
  // The stats say what the ports counted: one signal on each x+ link of chips 0 to 2.
  std::map<std::string, uint64_t> in_stats;
  for (const auto& link : run.outcome.stats.links) {
    if (link.signals > 0)
      in_stats[std::to_string(link.chip) + ":" + link.name.substr(link.name.rfind(' ') + 1)] =
          link.signals;
  }
  const std::map<std::string, uint64_t> expected = {{"0:x+", 1}, {"1:x+", 1}, {"2:x+", 1}};
  EXPECT_EQ(in_stats, expected);
  EXPECT_EQ(in_stats, run.signals);
  for (const auto& memory : run.outcome.stats.memories)
    EXPECT_EQ(memory.signals, 0u) << memory.name << ": a signal ends at the router";
}

TEST(SignalRoute, ASignalAndADmasNoticeAreSentByOneSequence) {
  // SliceState::SendRemoteSignal is what semaphore_signal and a zero-byte DMA both call: at
  // any time, it books the route and says when the semaphore changes.
  for (const bool through_tlm : {false, true}) {
    base::EngineOptions options = TimingOnly();
    options.book_through_tlm = through_tlm;
    sim::Simulation simulation(Line(4), options);
    const SemaphoreHandle s = simulation.AddSemaphore(3, SemaphoreKind::kRegular, "s");
    Picoseconds sent = 0, changes = 0;
    const auto outcome = simulation.Run([&](CorePort& core) {
      if (core.chip() != 0) return;
      core.Compute(base::ComputeUnit::kScalar, 1000, "before");
      sent = core.Now();
      changes = simulation.slice().state().SendRemoteSignal(0, s, sent, nullptr);
    });
    ASSERT_TRUE(outcome.ok) << outcome.error;
    EXPECT_GT(sent, 0u);
    const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth);
    EXPECT_EQ(changes, sent + 3 * Ns(kHopNs) + packet + Ns(kSignalNs)) << through_tlm;
    uint64_t crossed = 0;
    for (const auto& link : outcome.stats.links)
      crossed += link.signals;
    EXPECT_EQ(crossed, 3u) << through_tlm;
  }
}

TEST(SignalRoute, ASlowedLinkOnTheRouteDelaysTheSignalByItsPacketTime) {
  // chip 1's x+ link at a thousandth of its bandwidth: the packet takes 1000x as long on it,
  // and cut through, the slowest hop's packet time is what the route adds:
  //   arrival = 3 hops + 64 B / (bandwidth / 1000) + signal latency.
  constexpr double kFactor = 1000;
  base::EngineOptions slowed = TimingOnly();
  slowed.link_slowdown.push_back({1, "x+", kFactor});
  SignalRun run = RunSignal(Line(4), 0, 3, slowed);
  ASSERT_TRUE(run.outcome.ok) << run.outcome.error;
  const Picoseconds slow_packet = TransferTime(sim::kSignalBytes, kLinkBandwidth / kFactor);
  EXPECT_EQ(run.arrived, 3 * Ns(kHopNs) + slow_packet + Ns(kSignalNs));
  EXPECT_GT(slow_packet, 100 * TransferTime(sim::kSignalBytes, kLinkBandwidth));
  // A slowed link off the route changes nothing.
  base::EngineOptions elsewhere = TimingOnly();
  elsewhere.link_slowdown.push_back({2, "x-", kFactor});
  SignalRun off = RunSignal(Line(4), 0, 3, elsewhere);
  ASSERT_TRUE(off.outcome.ok) << off.outcome.error;
  EXPECT_EQ(off.arrived, RunSignal(Line(4), 0, 3).arrived);
}

TEST(SignalRoute, ASignalToAnotherSlicePaysTheDcnLatency) {
  // v5e-2x4 in two slices: chip 0 and chip 8 are counterparts, one DCN link apart. The
  // packet holds its host's NIC out, reaches the other host the DCN latency later and holds
  // its NIC in (the same speed: cut through, once).
  const config::Topology topology = topologies::ParseTopology(
      topologies::PresetText("v5e-2x4") + "multislice { slices: 2 }", "two.textproto");
  SignalRun run = RunSignal(topology, 0, 8);
  ASSERT_TRUE(run.outcome.ok) << run.outcome.error;
  const Picoseconds nic_packet =
      TransferTime(sim::kSignalBytes, topology.dcn().nic_bandwidth_bytes_per_s());
  const Picoseconds expected =
      Ns(topology.dcn().latency_ns()) + nic_packet + Ns(topology.ici().signal_latency_ns());
  EXPECT_EQ(run.arrived, expected);
  EXPECT_GT(Ns(topology.dcn().latency_ns()), Ns(topology.ici().hop_latency_ns()));
  // The DCN link's port is its host's NIC out (sim/dcn.h), which the host's 8 chips share:
  // each of their DCN links reports the one signal, and no ICI link saw it.
  EXPECT_EQ(run.signals.size(), 8u);
  for (const auto& [link, count] : run.signals) {
    const char axis = link[link.find(':') + 1];
    EXPECT_TRUE(axis != 'x' && axis != 'y') << link;
    EXPECT_EQ(count, 1u) << link;
  }
  // The run's NIC stats (host 0 out, host 0 in, host 1 out, host 1 in) count it once at
  // each end, and no ICI link's stats do.
  ASSERT_EQ(run.outcome.stats.nics.size(), 4u);
  const std::vector<uint64_t> nics = {
      run.outcome.stats.nics[0].signals, run.outcome.stats.nics[1].signals,
      run.outcome.stats.nics[2].signals, run.outcome.stats.nics[3].signals};
  EXPECT_EQ(nics, (std::vector<uint64_t>{1, 0, 0, 1}));
  for (const auto& link : run.outcome.stats.links)
    EXPECT_EQ(link.signals, 0u) << link.name;
}

TEST(SignalRoute, BookingThroughTlmGivesTheSameTimeAndCounts) {
  base::EngineOptions tlm = TimingOnly();
  tlm.book_through_tlm = true;
  for (ChipId to : {ChipId{1}, ChipId{3}}) {
    SignalRun direct = RunSignal(Line(4), 0, to);
    SignalRun through = RunSignal(Line(4), 0, to, tlm);
    ASSERT_TRUE(direct.outcome.ok && through.outcome.ok) << through.outcome.error;
    EXPECT_EQ(through.arrived, direct.arrived) << "to chip " << to;
    EXPECT_EQ(through.signals, direct.signals);
  }
}

// Records what the model traces, and checks the order the trace wants: on every track,
// timestamps never go back.
class RecordingTrace : public traces::TraceSink {
 public:
  traces::TrackId AddProcessTrack(std::string_view name, int) override { return Add(name); }
  traces::TrackId AddTrack(traces::TrackId, std::string_view name, int) override {
    return Add(name);
  }
  traces::TrackId AddCounterTrack(traces::TrackId, std::string_view name, traces::CounterUnit,
                                  int) override {
    return Add(name);
  }
  void Begin(traces::TrackId track, uint64_t ts, std::string_view, const traces::Args&,
             traces::FlowId, traces::FlowId) override {
    At(track, ts);
  }
  void End(traces::TrackId track, uint64_t ts) override { At(track, ts); }
  void Instant(traces::TrackId track, uint64_t ts, std::string_view name, const traces::Args&,
               traces::FlowId, traces::FlowId) override {
    At(track, ts);
    if (name.starts_with("signal")) signals.push_back({names[track - 1], std::string(name)});
    instants.push_back({std::string(name), ts});
  }
  void Counter(traces::TrackId track, uint64_t ts, double) override { At(track, ts); }
  void Finish() override {}

  std::vector<std::string> names;                            // by track id - 1
  std::vector<std::pair<std::string, std::string>> signals;  // track, event name
  std::vector<std::pair<std::string, uint64_t>> instants;    // every instant: name, time
  int out_of_order = 0;

 private:
  traces::TrackId Add(std::string_view name) {
    names.emplace_back(name);
    last_.push_back(0);
    return names.size();
  }
  void At(traces::TrackId track, uint64_t ts) {
    if (ts < last_[track - 1]) ++out_of_order;
    last_[track - 1] = ts;
  }
  std::vector<uint64_t> last_;
};

TEST(SignalRoute, ADmaOfNoBytesSendsItsNoticeAlongTheRouteAsASignal) {
  // No chunk carries it, so the receive semaphore's notice crosses the links as a signal's
  // packet: it arrives three hops, the packet and the signal latency after it started.
  RecordingTrace trace;
  base::EngineOptions options = TimingOnly();
  options.trace = &trace;
  sim::Simulation simulation(Line(4), options);
  const auto source = simulation.Allocate(0, base::MemorySpace::kHbm, 64, "source");
  const auto destination = simulation.Allocate(3, base::MemorySpace::kHbm, 64, "destination");
  const auto received = simulation.AddSemaphore(3, SemaphoreKind::kDma, "received");
  const auto outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() != 0) return;
    base::ByteBox box;
    box.counts = {0};
    box.strides = {1};
    base::DmaRequest request;
    request.source = {source, box};
    request.destination = {destination, box};
    request.recv_semaphore = received;
    request.label = "empty";
    core.StartDma(request);
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth);
  EXPECT_THAT(trace.instants, ::testing::Contains(std::pair<std::string, uint64_t>{
                                  "arrived: empty", 3 * Ns(kHopNs) + packet + Ns(kSignalNs)}));
  for (ChipId c = 0; c < 3; ++c)
    EXPECT_EQ(simulation.slice().chip(c).links()[0]->port().signals(), 1u) << "chip " << c;
}

// A link model of the test's own: it sees every chunk and signal that leaves by the link it
// is bound to and times them as a link of `bandwidth` and `latency` would.
class RecordingLink : public sc_core::sc_module {
 public:
  RecordingLink(sc_core::sc_module_name name, double bandwidth, Picoseconds latency,
                bool refuse_signals = false)
      : sc_module(name),
        socket("socket"),
        timing_("test link", bandwidth, latency, nullptr, 0),
        refuse_signals_(refuse_signals) {
    socket.register_b_transport(this, &RecordingLink::b_transport);
  }

  tlm_utils::simple_target_socket<RecordingLink> socket;
  // What the model saw, kept apart from it: RunSignal destroys the model with the slice.
  struct Seen {
    int chunks = 0;
    int signals = 0;
    uint64_t signal_address = 0;
    unsigned int signal_length = 0;
  };
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time&) {
    auto* chunk = payload.get_extension<sim::ChunkExtension>();
    if (!chunk->signal) {
      ++seen->chunks;
      timing_.BookChunk(chunk->schedule, payload.get_data_length(), chunk->transfer, nullptr);
    } else if (refuse_signals_) {
      payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    } else {
      ++seen->signals;
      seen->signal_address = payload.get_address();
      seen->signal_length = payload.get_data_length();
      timing_.BookChunk(chunk->schedule, payload.get_data_length(), 0, nullptr);
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  sim::LinkTiming timing_;
  bool refuse_signals_;
};

TEST(SignalRoute, ALinkModelBoundInTheRouteSeesTheSignalAndTimesIt) {
  // Chip 1's x+ link is the test's model: a 5 us link at a tenth of the bandwidth.
  std::shared_ptr<RecordingLink::Seen> model;
  SignalRun run = RunSignal(Line(4), 0, 3, TimingOnly(), [&](SignalRun& r) {
    auto made = std::make_unique<RecordingLink>("test_link", kLinkBandwidth / 10, Ns(5000));
    model = made->seen;
    r.simulation->slice().chip(1).UseLinkTarget(r.simulation->torus().LinksFrom(1)[0],
                                                made->socket);
    r.kept.push_back(std::move(made));
  });
  ASSERT_TRUE(run.outcome.ok) << run.outcome.error;
  EXPECT_EQ(model->signals, 1);
  EXPECT_EQ(model->chunks, 0);
  EXPECT_EQ(model->signal_length, sim::kSignalBytes);
  EXPECT_EQ(sim::AddressChip(model->signal_address), 3u);
  // The model's latency replaces the link's, and its packet time is the route's slowest.
  const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth / 10);
  EXPECT_EQ(run.arrived, 2 * Ns(kHopNs) + Ns(5000) + packet + Ns(kSignalNs));
  // The link the model stands in for saw nothing.
  const std::map<std::string, uint64_t> expected = {{"0:x+", 1}, {"2:x+", 1}};
  EXPECT_EQ(run.signals, expected);
}

TEST(SignalRoute, ALinkModelThatRefusesASignalFailsTheRunWithTheFix) {
  SignalRun run = RunSignal(Line(3), 0, 2, TimingOnly(), [&](SignalRun& r) {
    auto model = std::make_unique<RecordingLink>("refusing_link", kLinkBandwidth, Ns(kHopNs), true);
    r.simulation->slice().chip(0).UseLinkTarget(r.simulation->torus().LinksFrom(0)[0],
                                                model->socket);
    r.kept.push_back(std::move(model));
  });
  EXPECT_FALSE(run.outcome.ok);
  EXPECT_EQ(run.outcome.error_kind, ErrorKind::kInvalidArgument);
  EXPECT_THAT(run.outcome.error, HasSubstr("the x+ link of chip 0 (x=0) refused a semaphore "
                                           "signal to chip 2 (x=2)"));
  EXPECT_THAT(run.outcome.error, HasSubstr("a link model must accept TLM_IGNORE_COMMAND"));
}

TEST(SignalRoute, ALinkModelIsBoundOnTheChipItsLinkLeaves) {
  sim::Simulation simulation(Line(3), TimingOnly());
  RecordingLink model("misplaced_link", kLinkBandwidth, Ns(kHopNs));
  try {
    simulation.slice().chip(0).UseLinkTarget(simulation.torus().LinksFrom(1)[0], model.socket);
    FAIL() << "a link of chip 1 was bound on chip 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("does not leave chip 0 (x=0); bind a link model on the chip "
                                    "the link leaves"));
  }
}

TEST_F(ModuleTest, ASignalSentIntoARouterIsForwardedLinkByLinkAndEndsAtTheDestinationRouter) {
  // Pure TLM: the transaction enters chip 0's router, each link forwards it to the next
  // router, and chip 2's router answers for the semaphore (no memory hop).
  sim::Slice slice("slice", Line(3), TimingOnly());
  Elaborate();
  ChunkPayload signal(sim::SignalAddress(2, 0), sim::kSignalBytes);
  signal.chunk().signal = true;
  signal.chunk().forward = true;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  slice.chip(0).dma().socket->b_transport(signal.payload(), delay);
  ASSERT_TRUE(signal.payload().is_response_ok()) << signal.payload().get_response_string();
  const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth);
  EXPECT_EQ(signal.schedule().arrival(), 2 * Ns(kHopNs) + packet);
  EXPECT_EQ(delay.value(), signal.schedule().arrival());
  EXPECT_EQ(slice.chip(0).links()[0]->port().signals(), 1u);
  EXPECT_EQ(slice.chip(1).links()[0]->port().signals(), 1u);
  for (int slot = 0; slot < slice.chip(2).memory_count(); ++slot)
    EXPECT_EQ(slice.chip(2).memory_at(slot).port().busy_time(), 0u);
}

TEST(SignalRoute, ATracedSignalIsAnInstantOnEveryLinkItCrossesAmongTheChunks) {
  // Chip 0 sends chip 2 a DMA of four chunks and, once its first byte has left, signals
  // chip 2: the packet crosses both links while they carry the DMA's chunks, and the trace
  // writes its instant between the chunks' slices in time order.
  RecordingTrace trace;
  base::EngineOptions options = TimingOnly();
  options.trace = &trace;
  sim::Simulation simulation(Line(3), options);
  const uint64_t bytes = 4 * 524288;
  const auto source = simulation.Allocate(0, base::MemorySpace::kHbm, bytes, "source");
  const auto destination = simulation.Allocate(2, base::MemorySpace::kHbm, bytes, "destination");
  const auto received = simulation.AddSemaphore(2, SemaphoreKind::kDma, "received");
  const auto s = simulation.AddSemaphore(2, SemaphoreKind::kRegular, "ready");
  Picoseconds ready = 0;
  Picoseconds landed = 0;
  const auto outcome = simulation.Run([&](CorePort& core) {
    if (core.chip() == 0) {
      base::ByteBox box;
      box.counts = {bytes};
      box.strides = {1};
      base::DmaRequest request;
      request.source = {source, box};
      request.destination = {destination, box};
      request.recv_semaphore = received;
      request.label = "dma";
      core.StartDma(request);
      core.Signal(s, 1);
    }
    if (core.chip() == 2) {
      core.Wait(s, 1, base::WaitKind::kSemaphore, "ready");
      ready = core.Now();
      core.Wait(received, static_cast<int64_t>(bytes), base::WaitKind::kDmaRecv, "received");
      landed = core.Now();
    }
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  trace.Finish();
  EXPECT_EQ(trace.out_of_order, 0);
  using Pair = std::pair<std::string, std::string>;
  EXPECT_THAT(trace.signals, ::testing::UnorderedElementsAre(Pair{"ICI x+ out", "signal: ready"},
                                                             Pair{"ICI x+ out", "signal: ready"}));
  // It did not wait for the chunks booked on the links ahead of it.
  const Picoseconds packet = TransferTime(sim::kSignalBytes, kLinkBandwidth);
  EXPECT_EQ(ready, 2 * Ns(kHopNs) + packet + Ns(kSignalNs));
  EXPECT_GT(landed, 4 * TransferTime(524288, kLinkBandwidth));
}

}  // namespace
}  // namespace tpusim::modules
