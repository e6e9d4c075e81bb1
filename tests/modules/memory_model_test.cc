// Memory timing models (sim/memory_models.h): the topology's `row_buffer` model, and a TLM-2.0
// target of the test's own bound in front of a chip's HBM (Chip::UseMemoryTarget). Each
// changes a DMA's time exactly as it says; a model the topology misnames or misconfigures is
// an error that says what is wrong.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "sim/chip.h"
#include "sim/memory.h"
#include "sim/slice.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"
#include "traces/trace_sink.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;
using ::testing::HasSubstr;

constexpr double kHbmBandwidth = 8.19e11;  // v5e (docs/references.md §1)
constexpr double kVmemBandwidth = 1.8018e13;
constexpr uint64_t kChunk = 512 << 10;  // v5e's DMA chunk_bytes

// Chip 0's HBM timed by row_buffer with these parameters (name, value).
config::Topology RowBuffer(const std::vector<std::pair<std::string, double>>& parameters) {
  return testing::MakeTopology({1}, {false}, [&](config::Topology& t) {
    t.mutable_chip()->mutable_hbm()->set_model("row_buffer");
    for (const auto& [name, value] : parameters) {
      auto* p = t.mutable_chip()->mutable_hbm()->add_parameter();
      p->set_name(name);
      p->set_value(value);
    }
  });
}

// An HBM -> VMEM copy on chip 0 of `bytes`, after the previous one if `after_previous`.
DmaSpec HbmToVmem(uint64_t bytes, bool after_previous = false) {
  return DmaSpec{0, MemorySpace::kHbm, 0, MemorySpace::kVmem, bytes, after_previous};
}

TEST(RowBufferModel, AChunkPaysBandwidthPlusItsRowMissesOverTheBanks) {
  // 1 KiB rows, 64 banks, 30 ns a miss. The copy's 4 chunks of 512 KiB each open 512 rows
  // (the buffer starts at a row boundary; a row is never revisited). The VMEM write of a
  // chunk overlaps its read and is shorter, so the reads set the time:
  //   4 x (512 KiB / 819 GB/s + 512 x 30 ns / 64).
  const Picoseconds read = base::TransferTime(kChunk, kHbmBandwidth);
  ASSERT_LT(base::TransferTime(kChunk, kVmemBandwidth), read);
  const Picoseconds misses = 512 * Picoseconds{30'000} / 64;
  const auto modelled = RowBuffer({{"row_bytes", 1024}, {"banks", 64}, {"row_miss_ns", 30}});
  EXPECT_EQ(TimeDma(modelled, HbmToVmem(4 * kChunk)), 4 * (read + misses));
  // The same copy on the bandwidth model pays bandwidth only.
  EXPECT_EQ(TimeDma(testing::MakeTopology({1}, {false}), HbmToVmem(4 * kChunk)), 4 * read);
  // The defaults are those numbers.
  EXPECT_EQ(TimeDma(RowBuffer({}), HbmToVmem(4 * kChunk)), 4 * (read + misses));
  // Twice the banks open rows twice as fast.
  EXPECT_EQ(TimeDma(RowBuffer({{"banks", 128}}), HbmToVmem(4 * kChunk)),
            4 * (read + 512 * Picoseconds{30'000} / 128));
}

TEST(RowBufferModel, RowsStayOpenUntilTheirBankOpensAnother) {
  // 8 KiB rows and 64 banks: one 512 KiB chunk opens one row in every bank. Reading the same
  // chunk again finds them all open; reading the next 512 KiB opens 64 new ones.
  const auto topology = RowBuffer({{"row_bytes", 8192}, {"banks", 64}, {"row_miss_ns", 30}});
  DmaSpec again = HbmToVmem(kChunk, true);
  again.reuse_source = 0;
  DmaRun run(topology, {HbmToVmem(kChunk), again, HbmToVmem(kChunk, true)}, TimingOnly());
  const std::vector<Picoseconds> landed = run.Run();
  const Picoseconds read = base::TransferTime(kChunk, kHbmBandwidth);
  const Picoseconds misses = 64 * Picoseconds{30'000} / 64;
  EXPECT_EQ(landed[0], read + misses);
  EXPECT_EQ(landed[1] - landed[0], read) << "every row was open";
  EXPECT_EQ(landed[2] - landed[1], read + misses);
  // The HBM port's statistics count what the model booked.
  const auto& hbm = run.outcome().stats.memories[0];
  EXPECT_EQ(hbm.bytes, 3 * kChunk);
  EXPECT_EQ(hbm.busy, 3 * read + 2 * misses);
}

TEST(RowBufferModel, MovesTheBytesOfAFunctionalRun) {
  DmaRun run(RowBuffer({}), {HbmToVmem(kChunk + 100)});
  std::vector<uint8_t> bytes(kChunk + 100);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 31 + 7);
  run.FillSource(0, bytes);
  run.Run();
  EXPECT_EQ(run.ReadDestination(0), bytes);
}

// A memory model written against plain TLM-2.0: every transaction takes `per_chunk` from
// when it arrives, with no port to share. DMI and debug transport go on to the chip's Memory.
class FixedDelayMemory : public sc_core::sc_module {
 public:
  FixedDelayMemory(sc_core::sc_module_name name, sim::Memory& storage, Picoseconds per_chunk)
      : sc_module(name), socket("socket"), to_storage("to_storage"), per_chunk_(per_chunk) {
    socket.register_b_transport(this, &FixedDelayMemory::b_transport);
    socket.register_get_direct_mem_ptr(this, &FixedDelayMemory::get_direct_mem_ptr);
    socket.register_transport_dbg(this, &FixedDelayMemory::transport_dbg);
    to_storage.bind(storage.socket);
  }

  tlm_utils::simple_target_socket<FixedDelayMemory> socket;
  tlm_utils::simple_initiator_socket<FixedDelayMemory> to_storage;
  std::vector<uint64_t> addresses;  // of the chunks it timed
  bool refuse_after_first = false;
  bool out_of_memory_after_first = false;  // the host runs out while the calendar books a chunk
  bool forward_bytes = true;               // false: grants neither DMI nor debug transport

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    if (out_of_memory_after_first && !addresses.empty()) throw std::bad_alloc();
    if (refuse_after_first && !addresses.empty()) {
      payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    addresses.push_back(payload.get_address());
    EXPECT_EQ(payload.get_command(), tlm::TLM_IGNORE_COMMAND);
    EXPECT_EQ(payload.get_data_length(), kChunk);
    delay += sc_core::sc_time::from_value(per_chunk_);
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
    return forward_bytes && to_storage->get_direct_mem_ptr(payload, dmi);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) {
    return forward_bytes ? to_storage->transport_dbg(payload) : 0;
  }

  Picoseconds per_chunk_;
};

FixedDelayMemory& BindFixedDelay(DmaRun& run, Picoseconds per_chunk) {
  sim::Chip& chip = run.slice().chip(0);
  auto& model = run.Keep(std::make_unique<FixedDelayMemory>(
      "fixed_delay_hbm", chip.memory(MemorySpace::kHbm), per_chunk));
  chip.UseMemoryTarget(MemorySpace::kHbm, model.socket, "fixed_delay");
  return model;
}

TEST(CustomMemoryTarget, BoundInFrontOfTheHbmTimesEveryChunk) {
  constexpr Picoseconds kPerChunk = 1'000'000;  // 1 us, longer than the VMEM write
  DmaRun run(testing::MakeTopology({1}, {false}), {HbmToVmem(4 * kChunk)});
  FixedDelayMemory& model = BindFixedDelay(run, kPerChunk);
  std::vector<uint8_t> bytes(4 * kChunk);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i ^ (i >> 9));
  run.FillSource(0, bytes);
  const std::vector<Picoseconds> landed = run.Run();
  // Each chunk's read takes 1 us from when the DMA engine sends it; the next is sent when the
  // previous one is done.
  EXPECT_EQ(landed[0], 4 * kPerChunk);
  const uint64_t base = run.slice().chip(0).memory(MemorySpace::kHbm).Address(0, 0);
  EXPECT_EQ(model.addresses,
            (std::vector<uint64_t>{base, base + kChunk, base + 2 * kChunk, base + 3 * kChunk}));
  // The bytes still moved (DMI through the model to the Memory), and the Memory's own port,
  // which the model replaced, booked nothing.
  EXPECT_EQ(run.ReadDestination(0), bytes);
  EXPECT_EQ(run.outcome().stats.memories[0].bytes, 0u);
  EXPECT_EQ(run.slice().chip(0).memory(MemorySpace::kHbm).timing_model(), "fixed_delay");
}

TEST(CustomMemoryTarget, ThatRefusesAChunkFailsTheRunNamingIt) {
  // The first chunk is booked as the kernel starts the DMA, the others from the calendar.
  for (bool first : {true, false}) {
    SCOPED_TRACE(first ? "first chunk" : "second chunk");
    const std::string trace = testing::TempPath(first ? "first.pftrace" : "second.pftrace");
    auto sink = traces::OpenTraceFile(trace);
    base::EngineOptions options = TimingOnly();
    options.trace = sink.get();
    {
      DmaRun run(testing::MakeTopology({1}, {false}), {HbmToVmem(4 * kChunk)}, options);
      FixedDelayMemory& model = BindFixedDelay(run, 1'000'000);
      model.refuse_after_first = true;
      if (first) model.addresses.push_back(0);
      run.Run(/*expect_ok=*/false);
      EXPECT_FALSE(run.outcome().ok);
      EXPECT_EQ(run.outcome().error_kind, ErrorKind::kInvalidArgument);
      EXPECT_EQ(run.outcome().error,
                "the HBM of chip 0 (x=0) (timing model 'fixed_delay') refused a chunk of DMA "
                "'dma 0' (TLM_ADDRESS_ERROR_RESPONSE); a memory model must accept "
                "TLM_IGNORE_COMMAND transactions.");
    }
    // And the trace is complete up to the failure.
    sink->Finish();
    sink.reset();
    testing::ExpectTraceValid(trace);
  }
}

TEST(CustomMemoryTarget, HostOutOfMemoryOnTheCalendarIsACapacityFailure) {
  // The chunks after the first are booked from the calendar, a SystemC method outside every
  // core's thread: running out of host memory there ends the run with the reason and the
  // fix, as it does on a core's thread, instead of escaping sc_start.
  DmaRun run(testing::MakeTopology({1}, {false}), {HbmToVmem(4 * kChunk)}, TimingOnly());
  BindFixedDelay(run, 1'000'000).out_of_memory_after_first = true;
  run.Run(/*expect_ok=*/false);
  EXPECT_FALSE(run.outcome().ok);
  EXPECT_EQ(run.outcome().error_kind, ErrorKind::kCapacity);
  EXPECT_THAT(run.outcome().error, HasSubstr("ran out of host memory"));
  EXPECT_THAT(run.outcome().error, HasSubstr("fewer chips"));
}

TEST(CustomMemoryTarget, ThatCannotReachTheBytesFailsAFunctionalRun) {
  DmaRun run(testing::MakeTopology({1}, {false}), {HbmToVmem(kChunk)});
  BindFixedDelay(run, 1'000'000).forward_bytes = false;
  run.Run(/*expect_ok=*/false);
  EXPECT_FALSE(run.outcome().ok);
  EXPECT_EQ(run.outcome().error_kind, ErrorKind::kInvalidArgument);
  EXPECT_THAT(run.outcome().error,
              HasSubstr("grants neither DMI nor debug transport, so a functional run cannot "
                        "move its bytes; forward both to the chip's Memory, or run timing-only."));
}

// A model that keeps its own bytes and grants DMI to only the first `window` of them, as
// page-granular TLM models do; the rest it serves by debug transport only.
class WindowedDmiMemory : public sc_core::sc_module {
 public:
  WindowedDmiMemory(sc_core::sc_module_name name, uint64_t bytes, uint64_t window)
      : sc_module(name), socket("socket"), bytes(bytes), window_(window) {
    socket.register_b_transport(this, &WindowedDmiMemory::b_transport);
    socket.register_get_direct_mem_ptr(this, &WindowedDmiMemory::get_direct_mem_ptr);
    socket.register_transport_dbg(this, &WindowedDmiMemory::transport_dbg);
  }

  tlm_utils::simple_target_socket<WindowedDmiMemory> socket;
  std::vector<uint8_t> bytes;
  uint64_t debug_bytes = 0;  // moved by debug transport

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time&) {
    payload.set_response_status(tlm::TLM_OK_RESPONSE);  // takes no time
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
    const uint64_t address = payload.get_address();
    if (sim::AddressOffset(address) >= window_) return false;
    const uint64_t start = address - sim::AddressOffset(address);
    dmi.set_dmi_ptr(bytes.data());
    dmi.set_start_address(start);
    dmi.set_end_address(start + window_ - 1);
    dmi.allow_read_write();
    return true;
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) {
    const uint64_t offset = sim::AddressOffset(payload.get_address());
    const unsigned int length = payload.get_data_length();
    if (payload.is_write()) std::memcpy(bytes.data() + offset, payload.get_data_ptr(), length);
    if (payload.is_read()) std::memcpy(payload.get_data_ptr(), bytes.data() + offset, length);
    debug_bytes += length;
    return length;
  }

  uint64_t window_;
};

TEST(CustomMemoryTarget, ThatGrantsDmiToPartOfABufferGetsTheRestByDebugTransport) {
  // A 16 KiB DMA from VMEM into an HBM whose model grants DMI to its first 4 KiB only: the
  // bytes past the window must not be written through the DMI pointer.
  constexpr uint64_t kBytes = 16 << 10;
  DmaRun run(testing::MakeTopology({1}, {false}),
             {DmaSpec{0, MemorySpace::kVmem, 0, MemorySpace::kHbm, kBytes}});
  sim::Chip& chip = run.slice().chip(0);
  auto& model = run.Keep(std::make_unique<WindowedDmiMemory>("windowed_hbm", 64 << 10, 4096));
  chip.UseMemoryTarget(MemorySpace::kHbm, model.socket, "windowed_dmi");
  std::vector<uint8_t> bytes(kBytes);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 13 + 5);
  run.FillSource(0, bytes);
  run.Run();
  ASSERT_EQ(chip.memory(MemorySpace::kHbm).Address(0, 0) & sim::kAddressOffsetMask, 0u);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), model.bytes.begin()));
  EXPECT_GE(model.debug_bytes, kBytes - 4096) << "bytes past the DMI window went by DMI";
}

// Building the slice checks each memory's model.
std::string BuildError(const config::Topology& topology) {
  try {
    sim::Simulation simulation(topology, TimingOnly());
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "the slice was built";
  return "";
}

TEST(MemoryModelErrors, AnUnknownModelListsTheRegisteredOnes) {
  const auto topology = testing::MakeTopology({2}, {false}, [](config::Topology& t) {
    auto* o = t.add_chip_override();
    o->add_chip(1);
    o->mutable_vmem()->set_model("sram_banks");
  });
  EXPECT_EQ(BuildError(topology),
            "the VMEM of chip 1 (x=1) asks for timing model 'sram_banks', which is not "
            "registered; the models are 'bandwidth', 'row_buffer' (a plugin loaded with --load "
            "may add more).");
}

TEST(MemoryModelErrors, AnUnknownParameterListsTheModelsParameters) {
  EXPECT_EQ(BuildError(RowBuffer({{"bank_count", 8}})),
            "the HBM of chip 0 (x=0) gives parameter 'bank_count' to timing model 'row_buffer', "
            "which takes 'row_bytes', 'banks', 'row_miss_ns'.");
  // The bandwidth model takes none.
  const auto topology = testing::MakeTopology({1}, {false}, [](config::Topology& t) {
    auto* p = t.mutable_chip()->mutable_smem()->add_parameter();
    p->set_name("banks");
    p->set_value(4);
  });
  EXPECT_EQ(BuildError(topology),
            "the SMEM of chip 0 (x=0) gives parameter 'banks' to timing model 'bandwidth', "
            "which takes none.");
}

TEST(MemoryModelErrors, AnOutOfRangeParameterGivesTheRange) {
  EXPECT_EQ(BuildError(RowBuffer({{"banks", 0}})),
            "the HBM of chip 0 (x=0) sets 'banks' of timing model 'row_buffer' to 0; it must be "
            "a whole number from 1 to 4096 (banks).");
  EXPECT_THAT(BuildError(RowBuffer({{"row_bytes", 1e9}})),
              HasSubstr("sets 'row_bytes' of timing model 'row_buffer' to 1000000000; it must be "
                        "a whole number from 64 to 1048576 (bytes)."));
  EXPECT_THAT(BuildError(RowBuffer({{"row_miss_ns", 1e7}})),
              HasSubstr("to 10000000; it must be from 0 to 1000000 (ns)."));
}

}  // namespace
}  // namespace tpusim::modules
