// Module tests of copy-on-write blocks (sim/block_bytes.h) in a Memory (sim/memory.h): a DMA
// of whole blocks shares them between buffers (TransportBlocks), and no write to one buffer,
// by any path (host, debug transport, DMI, a box scatter), shows in another.

#include <gtest/gtest.h>

#include <vector>

#include "sim/byte_box.h"
#include "sim/memory.h"
#include "sim/port_timing.h"
#include "tests/modules/module_support.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;
using sim::Block;
using sim::BlockBytes;

constexpr uint64_t kBlock = BlockBytes::kBlockBytes;

class SharedBlocksTest : public ModuleTest {
 protected:
  SharedBlocksTest() : hbm_("hbm", 0, "chip 0", MemorySpace::kHbm, 1 << 30, true, timing_) {
    initiator_.socket.bind(hbm_.socket);
  }
  void SetUp() override { Elaborate(); }

  tlm::tlm_fw_transport_if<>& hbm() { return initiator_.target(); }

  // A buffer of `size` bytes holding 0, 1, 2, ... (mod 251, so blocks differ).
  uint32_t Written(uint64_t size, const std::string& label) {
    const uint32_t buffer = hbm_.Allocate(size, label);
    std::vector<uint8_t> bytes(size);
    for (uint64_t i = 0; i < size; ++i)
      bytes[i] = static_cast<uint8_t>(i % 251);
    hbm_.WriteAll(buffer, bytes.data(), size);
    return buffer;
  }

  // What a DMA of [from_offset, + length) of `from` to `to_offset` of `to` does when both
  // are whole blocks: true if the blocks were shared.
  bool Share(uint32_t from, uint64_t from_offset, uint32_t to, uint64_t to_offset,
             uint64_t length) {
    std::vector<Block> blocks;
    if (!sim::TransportBlocks(hbm(), hbm_.Address(from, from_offset), length, blocks, false))
      return false;
    EXPECT_EQ(blocks.size(), (length + kBlock - 1) / kBlock);
    return sim::TransportBlocks(hbm(), hbm_.Address(to, to_offset), length, blocks, true);
  }

  // A fresh DMI grant of byte `offset` of `buffer` for `command`.
  tlm::tlm_dmi Dmi(uint32_t buffer, uint64_t offset, tlm::tlm_command command) {
    tlm::tlm_generic_payload payload;
    payload.set_command(command);
    payload.set_address(hbm_.Address(buffer, offset));
    tlm::tlm_dmi dmi;
    EXPECT_TRUE(hbm().get_direct_mem_ptr(payload, dmi));
    return dmi;
  }

  sim::MemoryPortTiming timing_{"chip 0 HBM", 1e11, nullptr, 0};
  sim::Memory hbm_;
  TestInitiator initiator_{"initiator"};
};

TEST_F(SharedBlocksTest, ADmaOfWholeBlocksSharesThemAndAWriteToEitherSideStaysThere) {
  const uint32_t source = Written(4 * kBlock, "source");
  const uint32_t destination = hbm_.Allocate(4 * kBlock, "destination");
  const std::vector<uint8_t> original = hbm_.ReadAll(source);
  ASSERT_TRUE(Share(source, kBlock, destination, 2 * kBlock, 2 * kBlock));
  std::vector<uint8_t> landed = hbm_.ReadAll(destination);
  EXPECT_TRUE(std::equal(landed.begin() + 2 * kBlock, landed.end(), original.begin() + kBlock));
  EXPECT_EQ(landed[0], 0) << "bytes outside the range stay unwritten (zero)";

  // A host write, a debug-transport write and a box scatter into the destination, each into
  // a shared block, leave the source as it was.
  const uint8_t one = 0xEE;
  hbm_.Scatter(destination, base::ByteBox{2 * kBlock + 5, {}, {}, 1}, &one);
  uint8_t two = 0xDD;
  tlm::tlm_generic_payload write;
  write.set_command(tlm::TLM_WRITE_COMMAND);
  write.set_address(hbm_.Address(destination, 3 * kBlock + 9));
  write.set_data_ptr(&two);
  write.set_data_length(1);
  EXPECT_EQ(hbm().transport_dbg(write), 1u);
  EXPECT_EQ(hbm_.ReadAll(source), original);
  landed = hbm_.ReadAll(destination);
  EXPECT_EQ(landed[2 * kBlock + 5], 0xEE);
  EXPECT_EQ(landed[3 * kBlock + 9], 0xDD);

  // And the other way: writing the whole source leaves what the destination received.
  const std::vector<uint8_t> before = hbm_.ReadAll(destination);
  const std::vector<uint8_t> ones(4 * kBlock, 1);
  hbm_.WriteAll(source, ones.data(), ones.size());
  EXPECT_EQ(hbm_.ReadAll(destination), before);
  EXPECT_EQ(hbm_.ReadAll(source), ones);
}

TEST_F(SharedBlocksTest, DmiGrantsASharedBlockReadOnlyAndUnsharesItForAWrite) {
  const uint32_t source = Written(2 * kBlock, "source");
  const uint32_t destination = hbm_.Allocate(2 * kBlock, "destination");
  ASSERT_TRUE(Share(source, 0, destination, 0, 2 * kBlock));
  const std::vector<uint8_t> original = hbm_.ReadAll(source);

  const tlm::tlm_dmi read = Dmi(destination, kBlock + 3, tlm::TLM_READ_COMMAND);
  EXPECT_TRUE(read.is_read_allowed());
  EXPECT_FALSE(read.is_write_allowed()) << "a write would show in the source";
  EXPECT_EQ(read.get_start_address(), hbm_.Address(destination, kBlock)) << "one block";
  EXPECT_EQ(read.get_end_address(), hbm_.Address(destination, 2 * kBlock - 1));
  EXPECT_EQ(read.get_dmi_ptr()[3], original[kBlock + 3]);

  const tlm::tlm_dmi write = Dmi(destination, kBlock + 3, tlm::TLM_WRITE_COMMAND);
  ASSERT_TRUE(write.is_write_allowed());
  EXPECT_NE(write.get_dmi_ptr(), read.get_dmi_ptr()) << "the block was copied";
  write.get_dmi_ptr()[3] = static_cast<uint8_t>(original[kBlock + 3] + 1);
  EXPECT_EQ(hbm_.ReadAll(source), original);
  EXPECT_EQ(hbm_.ReadAll(destination)[kBlock + 3], static_cast<uint8_t>(original[kBlock + 3] + 1));
  // The destination's first block is still shared; the source's second one no longer is.
  EXPECT_FALSE(Dmi(destination, 0, tlm::TLM_READ_COMMAND).is_write_allowed());
  EXPECT_TRUE(Dmi(source, kBlock, tlm::TLM_READ_COMMAND).is_write_allowed());
}

TEST_F(SharedBlocksTest, RangesThatAreNotWholeBlocksAreCopiedInstead) {
  const uint32_t source = Written(3 * kBlock + 100, "source");
  const uint32_t destination = hbm_.Allocate(3 * kBlock + 100, "destination");
  const uint32_t longer = hbm_.Allocate(4 * kBlock, "longer");
  std::vector<Block> blocks;
  EXPECT_FALSE(sim::TransportBlocks(hbm(), hbm_.Address(source, 64), kBlock, blocks, false));
  EXPECT_FALSE(sim::TransportBlocks(hbm(), hbm_.Address(source, 0), kBlock + 64, blocks, false));
  EXPECT_TRUE(blocks.empty());
  EXPECT_FALSE(Share(source, 0, destination, 64, kBlock)) << "unaligned destination";
  // A last, short block goes only to a buffer whose last block is as short.
  EXPECT_FALSE(Share(source, 2 * kBlock, longer, 2 * kBlock, kBlock + 100));
  EXPECT_EQ(hbm_.ReadAll(longer), std::vector<uint8_t>(4 * kBlock, 0)) << "nothing changed";
  ASSERT_TRUE(Share(source, 2 * kBlock, destination, 2 * kBlock, kBlock + 100));
  EXPECT_EQ(hbm_.ReadAll(destination).back(), hbm_.ReadAll(source).back());
}

TEST_F(SharedBlocksTest, AnUnwrittenSourceLandsAsItsOwnFillPattern) {
  const uint32_t source = hbm_.Allocate(kBlock, "nan", base::Uninitialized{0xAB, 1});
  const uint32_t destination = hbm_.Allocate(kBlock, "zeros");
  ASSERT_TRUE(Share(source, 0, destination, 0, kBlock));
  EXPECT_EQ(hbm_.ReadAll(destination), std::vector<uint8_t>(kBlock, 0xAB));
  ASSERT_EQ(hbm_.unwritten_reads().size(), 1u);
  EXPECT_NE(hbm_.unwritten_reads()[0].find("'nan'"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::modules
