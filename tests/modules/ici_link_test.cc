// Module tests of IciLink (sim/ici_link.h): one link direction on its own, driven by TLM-2.0
// chunk transactions as a DMA engine sends them. Times are exact picoseconds: a chunk of B
// bytes holds a link of bandwidth W for B / W.

#include <gtest/gtest.h>

#include <string>

#include "sim/ici_link.h"
#include "sim/port_timing.h"
#include "sim/torus.h"
#include "tests/modules/module_support.h"

namespace tpusim::modules {
namespace {

constexpr double kBandwidth = 5e10;            // 50 bytes per ns
constexpr uint64_t kBytes = 1 << 20;           // one chunk
constexpr Picoseconds kDuration = 20'971'520;  // kBytes / kBandwidth
constexpr Picoseconds kLatency = 1'000'000;    // 1 us

// Stands for the router of the chip the link reaches: records what the link forwards.
class NextHop : public sc_core::sc_module, public tlm::tlm_fw_transport_if<> {
 public:
  explicit NextHop(sc_core::sc_module_name name) : sc_module(name) {}

  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time&) override {
    ++transactions;
    arrival = payload.get_extension<sim::ChunkExtension>()->schedule.arrival();
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override {
    ++dmi_requests;
    return true;
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) override {
    return payload.get_data_length();
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&,
                                     sc_core::sc_time&) override {
    return tlm::TLM_COMPLETED;
  }

  int transactions = 0;
  int dmi_requests = 0;
  Picoseconds arrival = 0;
};

class IciLinkTest : public ModuleTest {
 protected:
  const uint64_t target_ = Hbm(1);  // chunks go to chip 1's HBM
  // Chip 0's x+ link of a 2-chip line.
  const sim::Torus torus_{{2}, {"x"}, {false}};
  sim::LinkTiming timing_{"chip 0 ICI x+", kBandwidth, kLatency, nullptr, 0};
  sim::IciLink link_{"ici_x+", torus_.link(0), timing_, "chip_1"};

  void Send(ChunkPayload& chunk) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    link_.in->b_transport(chunk.payload(), delay);
    EXPECT_TRUE(chunk.payload().is_response_ok()) << chunk.payload().get_response_string();
  }
};

TEST_F(IciLinkTest, HoldsItselfForBytesOverBandwidthAndAddsItsLatency) {
  ASSERT_EQ(base::TransferTime(kBytes, kBandwidth), kDuration);
  ChunkPayload chunk(target_, kBytes);
  Send(chunk);
  EXPECT_EQ(chunk.schedule().departure(), kDuration);
  EXPECT_EQ(chunk.schedule().arrival(), kDuration + kLatency);
  EXPECT_EQ(link_.port().busy_time(), kDuration);
  EXPECT_EQ(link_.port().bytes_moved(), kBytes);
}

TEST_F(IciLinkTest, TwoChunksBookedAtOnceShareItsBandwidth) {
  ChunkPayload first(target_, kBytes, 0, 1);
  ChunkPayload second(target_, kBytes, 0, 2);
  Send(first);
  Send(second);
  // The second waits for the first: it leaves at twice the time one alone takes.
  EXPECT_EQ(first.schedule().departure(), kDuration);
  EXPECT_EQ(second.schedule().departure(), 2 * kDuration);
  EXPECT_EQ(first.schedule().arrival(), kDuration + kLatency);
  EXPECT_EQ(second.schedule().arrival(), 2 * kDuration + kLatency);
  EXPECT_EQ(link_.port().busy_time(), 2 * kDuration);
  EXPECT_EQ(link_.port().bytes_moved(), 2 * kBytes);
}

TEST_F(IciLinkTest, AChunkThatComesLaterFindsTheLinkIdle) {
  ChunkPayload first(target_, kBytes, 0);
  ChunkPayload later(target_, kBytes, 5 * kDuration);
  Send(first);
  Send(later);
  EXPECT_EQ(later.schedule().departure(), 6 * kDuration);
  EXPECT_EQ(link_.port().busy_time(), 2 * kDuration);
}

TEST_F(IciLinkTest, AnEarlierChunkTakesAFreeGapBeforeALaterBooking) {
  // Booked first, but for later: the link is free before it.
  ChunkPayload later(target_, kBytes, 3 * kDuration);
  ChunkPayload early(target_, kBytes, 0);
  ChunkPayload too_long(target_, 3 * kBytes, kDuration / 2);
  Send(later);
  Send(early);
  Send(too_long);
  EXPECT_EQ(later.schedule().departure(), 4 * kDuration);
  EXPECT_EQ(early.schedule().departure(), kDuration);  // backfilled
  // Three chunks' worth does not fit in [D, 3D): it goes after the later booking.
  EXPECT_EQ(too_long.schedule().departure(), 7 * kDuration);
}

TEST_F(IciLinkTest, AChunkStreamsThroughMemoryAndLinksCutThrough) {
  // HBM read -> this link -> a second link -> HBM write: the hops overlap, and each link's
  // latency delays the hops after it (sim/chunk.h, ChunkSchedule).
  sim::MemoryPortTiming source("chip 0 HBM", 8e11, nullptr, 0);
  sim::LinkTiming onward("chip 1 ICI x+", kBandwidth, 3 * kLatency, nullptr, 0);
  sim::MemoryPortTiming destination("chip 2 HBM", 8e11, nullptr, 0);
  ChunkPayload chunk(target_, kBytes);
  source.BookChunk(chunk.schedule(), kBytes, 1, nullptr);
  Send(chunk);
  onward.BookChunk(chunk.schedule(), kBytes, 1, nullptr);
  destination.BookChunk(chunk.schedule(), kBytes, 1, nullptr);
  // The read (1.3 us) is shorter than the link's 21 us: the link starts at once, and the
  // chunk leaves the chip when the first link is done with it.
  EXPECT_EQ(chunk.schedule().departure(), kDuration);
  EXPECT_EQ(chunk.schedule().pace(), kDuration);
  EXPECT_EQ(chunk.schedule().arrival(), kLatency + 3 * kLatency + kDuration);
}

TEST_F(IciLinkTest, AFasterLinkFedByASlowerOneCannotSendTheLastByteBeforeItCameIn) {
  // A chunk crosses a link of half this one's bandwidth (a link_override), then this one.
  // This link may start once the head has come in, but it can send the chunk's last byte
  // only after the slow link delivered it: each link's latency counts for the tail too.
  sim::LinkTiming slow("chip 0 ICI x+ (slow)", kBandwidth / 2, kLatency, nullptr, 0);
  ChunkPayload chunk(target_, kBytes);
  slow.BookChunk(chunk.schedule(), kBytes, 1, nullptr);  // [0, 2 D)
  Send(chunk);
  EXPECT_EQ(chunk.schedule().arrival(), 2 * kDuration + kLatency + kLatency);
  EXPECT_EQ(chunk.schedule().pace(), 2 * kDuration) << "the source still paces to the slow link";
  // Links of one speed stream as before: the second starts a latency after the first.
  sim::LinkTiming same("chip 0 ICI x+ (same)", kBandwidth, kLatency, nullptr, 0);
  ChunkPayload other(target_, kBytes, 10 * kDuration);
  same.BookChunk(other.schedule(), kBytes, 2, nullptr);
  Send(other);
  EXPECT_EQ(other.schedule().arrival(), 10 * kDuration + kDuration + 2 * kLatency);
}

TEST_F(IciLinkTest, ForwardsToTheNextRouterUnlessTheInitiatorCallsEachHop) {
  NextHop next("next");
  link_.out.bind(next);
  Elaborate();
  ChunkPayload booked_only(target_, kBytes);
  Send(booked_only);
  EXPECT_EQ(next.transactions, 0);
  ChunkPayload forwarded(target_, kBytes);
  forwarded.chunk().forward = true;
  Send(forwarded);
  EXPECT_EQ(next.transactions, 1);
  // The next hop sees the link's booking already in the schedule.
  EXPECT_EQ(next.arrival, 2 * kDuration + kLatency);
  // DMI and debug transport pass through.
  tlm::tlm_dmi dmi;
  EXPECT_TRUE(link_.in->get_direct_mem_ptr(forwarded.payload(), dmi));
  EXPECT_EQ(next.dmi_requests, 1);
  EXPECT_EQ(link_.in->transport_dbg(forwarded.payload()), kBytes);
}

TEST_F(IciLinkTest, RefusesWhatIsNotAChunk) {
  tlm::tlm_generic_payload plain;
  plain.set_command(tlm::TLM_IGNORE_COMMAND);
  plain.set_data_length(64);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  link_.in->b_transport(plain, delay);
  EXPECT_EQ(plain.get_response_status(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(link_.port().busy_time(), 0u);
  // Loosely timed only.
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  EXPECT_EQ(link_.in->nb_transport_fw(plain, phase, delay), tlm::TLM_COMPLETED);
  EXPECT_EQ(plain.get_response_status(), tlm::TLM_COMMAND_ERROR_RESPONSE);
}

TEST_F(IciLinkTest, DescribesItsParameters) {
  std::string text;
  for (const auto& p : link_.parameters())
    text += p.name + "=" + p.value + " ";
  EXPECT_EQ(text, "to=chip_1 bandwidth=50 GB/s latency=1.000 us ");
}

}  // namespace
}  // namespace tpusim::modules
