// Module tests of Memory (sim/memory.h): one chip's HBM on its own, as a TLM-2.0 target. Its
// port moves bytes at its bandwidth, reads and writes alike; its bytes are reached by DMI
// and debug transport.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sim/chunk.h"
#include "sim/memory.h"
#include "sim/port_timing.h"
#include "tests/modules/module_support.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;

constexpr double kBandwidth = 1e11;        // 100 bytes per ns
constexpr uint64_t kBytes = 64 << 10;      // what each transaction books
constexpr Picoseconds kDuration = 655360;  // kBytes / kBandwidth

// A plain LT transaction (no ChunkExtension) of `command` on `length` bytes at `address`.
class Plain : public tlm::tlm_generic_payload {
 public:
  Plain(tlm::tlm_command command, uint64_t address, uint8_t* data, unsigned length) {
    set_command(command);
    set_address(address);
    set_data_ptr(data);
    set_data_length(length);
    set_streaming_width(length);
    set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
};

class MemoryTest : public ModuleTest {
 protected:
  explicit MemoryTest(bool functional = true)
      : hbm_("hbm", 0, "chip 0", MemorySpace::kHbm, 1 << 30, functional, timing_) {
    initiator_.socket.bind(hbm_.socket);
  }
  void SetUp() override { Elaborate(); }  // elaborates

  tlm::tlm_fw_transport_if<>& hbm() { return initiator_.target(); }

  // b_transport through the socket; returns the annotated delay in picoseconds.
  Picoseconds Transport(tlm::tlm_generic_payload& payload, Picoseconds delay = 0) {
    sc_core::sc_time annotated = sc_core::sc_time::from_value(delay);
    hbm().b_transport(payload, annotated);
    EXPECT_TRUE(payload.is_response_ok()) << payload.get_response_string();
    return annotated.value();
  }

  sim::MemoryPortTiming timing_{"chip 0 HBM", kBandwidth, nullptr, 0};
  sim::Memory hbm_;
  TestInitiator initiator_{"initiator"};
};

class TimingOnlyMemoryTest : public MemoryTest {
 protected:
  TimingOnlyMemoryTest() : MemoryTest(/*functional=*/false) {}
};

TEST_F(MemoryTest, BackToBackChunksSaturateThePort) {
  ASSERT_EQ(base::TransferTime(kBytes, kBandwidth), kDuration);
  const uint32_t buffer = hbm_.Allocate(16 * kBytes, "buffer");
  constexpr int kChunks = 8;
  for (int i = 0; i < kChunks; ++i) {
    ChunkPayload chunk(hbm_.Address(buffer, i * kBytes), kBytes, 0, 1 + i);
    // All arrive at time 0; each returns when the port is done with it.
    EXPECT_EQ(Transport(chunk.payload()), (i + 1) * kDuration) << "chunk " << i;
    EXPECT_TRUE(chunk.chunk().has_hop_start);
    EXPECT_EQ(chunk.chunk().hop_start, i * kDuration);
  }
  EXPECT_EQ(hbm_.port().busy_time(), kChunks * kDuration);
  EXPECT_EQ(hbm_.port().bytes_moved(), kChunks * kBytes);
}

TEST_F(MemoryTest, ReadsAndWritesShareThePort) {
  const uint32_t buffer = hbm_.Allocate(kBytes, "buffer");
  std::vector<uint8_t> written(kBytes);
  for (size_t i = 0; i < written.size(); ++i)
    written[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> read(kBytes, 0);
  const uint64_t address = hbm_.Address(buffer, 0);
  Plain write(tlm::TLM_WRITE_COMMAND, address, written.data(), kBytes);
  Plain read_back(tlm::TLM_READ_COMMAND, address, read.data(), kBytes);
  ChunkPayload chunk(address, kBytes);
  EXPECT_EQ(Transport(write), kDuration);
  EXPECT_EQ(Transport(read_back), 2 * kDuration);
  EXPECT_EQ(Transport(chunk.payload()), 3 * kDuration);
  EXPECT_EQ(read, written);
  EXPECT_EQ(hbm_.port().bytes_moved(), 3 * kBytes);
}

TEST_F(MemoryTest, AChunkThatArrivesLaterStartsWhenItArrives) {
  const uint32_t buffer = hbm_.Allocate(kBytes, "buffer");
  ChunkPayload first(hbm_.Address(buffer, 0), kBytes);
  ChunkPayload later(hbm_.Address(buffer, 0), kBytes);
  EXPECT_EQ(Transport(first.payload()), kDuration);
  // Annotated to arrive at 5 D: done at 6 D, whatever the port did before.
  EXPECT_EQ(Transport(later.payload(), 5 * kDuration), 6 * kDuration);
  EXPECT_EQ(later.chunk().hop_start, 5 * kDuration);
}

TEST_F(MemoryTest, ARouterBooksAMemoryHopIntoTheChunksSchedule) {
  const uint32_t buffer = hbm_.Allocate(kBytes, "buffer");
  ChunkPayload busy(hbm_.Address(buffer, 0), kBytes);
  ChunkPayload chunk(hbm_.Address(buffer, 0), kBytes);
  Transport(busy.payload());
  sim::BookMemoryHop(hbm(), chunk.payload(), chunk.chunk());
  EXPECT_EQ(chunk.schedule().arrival(), 2 * kDuration);
  EXPECT_EQ(chunk.chunk().hop_start, kDuration);
}

TEST_F(MemoryTest, DirectBookingAgreesWithBTransport) {
  // The DMA engine books the model's own memories directly (ChunkTarget); the same chunks
  // through b_transport on a second port must get the same times.
  const uint32_t buffer = hbm_.Allocate(kBytes, "buffer");
  sim::MemoryPortTiming direct("direct", kBandwidth, nullptr, 0);
  // Arrival times only grow, as SystemC time does.
  const Picoseconds arrivals[] = {
      0, 0, kDuration / 3, 3 * kDuration, 3 * kDuration, 10 * kDuration};
  const uint64_t sizes[] = {kBytes, 3 * kBytes, kBytes / 2, kBytes, 5000, kBytes};
  for (size_t i = 0; i < std::size(arrivals); ++i) {
    ChunkPayload chunk(hbm_.Address(buffer, 0), sizes[i], arrivals[i]);
    sim::ChunkSchedule schedule(arrivals[i]);
    sim::BookMemoryHop(hbm(), chunk.payload(), chunk.chunk());
    direct.BookChunk(schedule, sizes[i], 1, nullptr);
    EXPECT_EQ(chunk.schedule().arrival(), schedule.arrival()) << "chunk " << i;
    EXPECT_EQ(chunk.schedule().pace(), schedule.pace()) << "chunk " << i;
  }
  EXPECT_EQ(hbm_.port().busy_time(), direct.port.busy_time());
}

TEST_F(MemoryTest, GrantsDmiToALiveBuffer) {
  hbm_.Allocate(100, "first");
  const uint32_t buffer = hbm_.Allocate(4096, "second", base::Uninitialized{0xAB, 1});
  Plain payload(tlm::TLM_READ_COMMAND, hbm_.Address(buffer, 10), nullptr, 1);
  tlm::tlm_dmi dmi;
  ASSERT_TRUE(hbm().get_direct_mem_ptr(payload, dmi));
  EXPECT_EQ(dmi.get_start_address(), hbm_.Address(buffer, 0));
  EXPECT_EQ(dmi.get_end_address(), hbm_.Address(buffer, 4095));
  EXPECT_TRUE(dmi.is_read_write_allowed());
  // The pointer is the buffer's bytes: unwritten ones read as the buffer's fill pattern, and
  // what is written through it is what the host reads.
  uint8_t* bytes = dmi.get_dmi_ptr();
  EXPECT_EQ(bytes[0], 0xAB);
  EXPECT_EQ(bytes[4095], 0xAB);
  bytes[7] = 42;
  EXPECT_EQ(hbm_.ReadAll(buffer)[7], 42);
  EXPECT_EQ(hbm_.port().bytes_moved(), 0u) << "DMI is untimed";
}

TEST_F(MemoryTest, FillsAnUnwrittenBufferWithItsElementPattern) {
  // A 4-byte pattern over a buffer whose size is not a multiple of it: every byte is the
  // pattern's byte for its offset, also past the doubling copies' power-of-two boundaries.
  const base::Uninitialized fill{0x7FC00001, 4};
  const uint32_t buffer = hbm_.Allocate(4099, "nan", fill);
  const std::vector<uint8_t> bytes = hbm_.ReadAll(buffer);
  ASSERT_EQ(bytes.size(), 4099u);
  for (uint64_t i = 0; i < bytes.size(); ++i)
    ASSERT_EQ(bytes[i], static_cast<uint8_t>(fill.pattern >> (8 * (i % 4)))) << "byte " << i;
  // From an offset inside an element, as a read at an unaligned offset asks for.
  std::vector<uint8_t> tail(7);
  fill.Fill(6, tail.size(), tail.data());
  for (uint64_t i = 0; i < tail.size(); ++i)
    EXPECT_EQ(tail[i], static_cast<uint8_t>(fill.pattern >> (8 * ((6 + i) % 4)))) << i;
}

TEST_F(MemoryTest, TakeBlocksMovesTheBytesOutAndLeavesTheBufferUnwritten) {
  const uint32_t buffer = hbm_.Allocate(64, "result", base::Uninitialized{0xAB, 1});
  std::vector<uint8_t> written(64, 5);
  hbm_.WriteAll(buffer, written.data(), written.size());
  EXPECT_EQ(hbm_.TakeBlocks(buffer).ReadAll(), written);
  EXPECT_EQ(hbm_.ReadAll(buffer), std::vector<uint8_t>(64, 0xAB));
}

TEST_F(MemoryTest, RefusesDmiToFreedOrUnknownAddresses) {
  const uint32_t freed = hbm_.Allocate(100, "freed");
  const uint32_t live = hbm_.Allocate(100, "live");
  hbm_.Free(freed);
  tlm::tlm_dmi dmi;
  auto at = [&](uint64_t address) {
    Plain payload(tlm::TLM_READ_COMMAND, address, nullptr, 1);
    return hbm().get_direct_mem_ptr(payload, dmi);
  };
  EXPECT_FALSE(at(hbm_.Address(freed, 0)));
  EXPECT_TRUE(at(hbm_.Address(live, 0)));
  EXPECT_FALSE(at(hbm_.Address(live, 100))) << "past its end (the alignment gap)";
  EXPECT_FALSE(at(hbm_.Address(live, 0) + (1 << 20))) << "beyond every buffer";
}

// What a DMA engine remembers of a buffer holds until that buffer is freed
// (sim/dma_buffer_cache.h): only the free of a buffer an engine remembers is counted, once.
TEST_F(MemoryTest, CountsTheFreesOfRememberedBuffersOnly) {
  uint64_t frees = 0;
  hbm_.CountFreesIn(frees);
  const uint32_t temporary = hbm_.Allocate(100, "temporary");
  const uint32_t remembered = hbm_.Allocate(100, "remembered");
  hbm_.NoteRemembered(remembered);
  hbm_.NoteRemembered(remembered);  // by a second engine
  hbm_.Free(temporary);
  EXPECT_EQ(frees, 0u) << "no engine remembers the temporary";
  hbm_.Free(remembered);
  EXPECT_EQ(frees, 1u);
  const uint32_t next = hbm_.Allocate(100, "next");
  EXPECT_NE(next, remembered) << "a new buffer never takes a freed one's number";
  hbm_.Free(next);
  EXPECT_EQ(frees, 1u);
}

TEST_F(MemoryTest, DebugTransportRoundTripsBytes) {
  const uint32_t buffer = hbm_.Allocate(256, "buffer");
  std::vector<uint8_t> in = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<uint8_t> out(in.size(), 0);
  Plain write(tlm::TLM_WRITE_COMMAND, hbm_.Address(buffer, 100), in.data(), 8);
  Plain read(tlm::TLM_READ_COMMAND, hbm_.Address(buffer, 100), out.data(), 8);
  EXPECT_EQ(hbm().transport_dbg(write), 8u);
  EXPECT_EQ(hbm().transport_dbg(read), 8u);
  EXPECT_EQ(out, in);
  EXPECT_EQ(hbm_.ReadAll(buffer)[103], 4);
  EXPECT_EQ(hbm_.port().bytes_moved(), 0u) << "debug transport is untimed";
  // A range that runs past the buffer's end moves nothing.
  Plain past_end(tlm::TLM_READ_COMMAND, hbm_.Address(buffer, 252), out.data(), 8);
  EXPECT_EQ(hbm().transport_dbg(past_end), 0u);
  // And so does a timed transaction on it, which says why.
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  hbm().b_transport(past_end, delay);
  EXPECT_EQ(past_end.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_F(MemoryTest, IsLooselyTimedOnly) {
  Plain payload(tlm::TLM_READ_COMMAND, 0, nullptr, 0);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  EXPECT_EQ(hbm().nb_transport_fw(payload, phase, delay), tlm::TLM_COMPLETED);
  EXPECT_EQ(payload.get_response_status(), tlm::TLM_COMMAND_ERROR_RESPONSE);
}

TEST_F(TimingOnlyMemoryTest, HasNoBytesToGrantButStillTimesChunks) {
  const uint32_t buffer = hbm_.Allocate(kBytes, "buffer");
  Plain payload(tlm::TLM_READ_COMMAND, hbm_.Address(buffer, 0), nullptr, 1);
  tlm::tlm_dmi dmi;
  EXPECT_FALSE(hbm().get_direct_mem_ptr(payload, dmi));
  EXPECT_EQ(hbm().transport_dbg(payload), 0u);
  ChunkPayload chunk(hbm_.Address(buffer, 0), kBytes);
  EXPECT_EQ(Transport(chunk.payload()), kDuration);
}

}  // namespace
}  // namespace tpusim::modules
