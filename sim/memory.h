#pragma once

// One memory of one chip (HBM, VMEM or SMEM) as a module of the tree (`slice.chip_0_0.hbm`).
//
// It is three things:
// - an allocator: named buffers against a capacity, each placed in the memory's address
//   space (base::BufferHandle indexes them);
// - storage: a buffer's bytes, in blocks allocated on first write (sim/block_bytes.h), so a
//   16 GiB HBM costs only what a run touches, and nothing in timing-only mode; a DMA of whole
//   blocks shares them copy-on-write (ShareBlocks). Initiators reach the bytes by DMI (one
//   block per grant) or debug transport;
// - a TLM-2.0 target for DMA chunks: b_transport holds the memory's port for the chunk's
//   bytes in the earliest free gap at or after the time the chunk reaches it (the annotated
//   delay) and returns when it is done. Reads and writes share the port.
//
// A chip may put another timing model in front of it (sim/memory_models.h): the router is
// then bound to that model's socket, which still reaches these bytes by DMI.

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "sim/bandwidth_port.h"
#include "sim/base_names.h"
#include "sim/block_bytes.h"
#include "sim/chunk.h"
#include "sim/loosely_timed.h"
#include "sim/parameters.h"
#include "sim/port_timing.h"

namespace tpusim::sim {

// A debug transport (transport_dbg) of TLM_IGNORE_COMMAND carrying this extension asks the
// Memory behind a route for a range's blocks themselves (into = false) or puts blocks in place
// of a range (into = true), instead of copying bytes: it sets `done` when it did. It does
// nothing when the range is not whole blocks, and a model that keeps bytes of its own ignores
// the command (it moves no data), so the initiator copies the bytes then. A timing model in
// front of a Memory forwards debug transport, and with it this extension.
struct ShareBlocks : tlm::tlm_extension<ShareBlocks> {
  std::vector<Block> blocks;
  bool into = false;
  bool done = false;
  tlm::tlm_extension_base* clone() const override { return new ShareBlocks(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const ShareBlocks&>(other);
  }
};

// Shares the blocks of a dense box of `length` bytes at global `address` through `target`'s
// debug transport: into `blocks` (into = false) or out of them into the box (into = true).
// False when the memory behind `target` does not share them: then copy the bytes. `blocks`
// is unchanged when into = true.
bool TransportBlocks(tlm::tlm_fw_transport_if<>& target, uint64_t address, uint64_t length,
                     std::vector<Block>& blocks, bool into);
// The bytes of blocks shared from a range of `length` bytes, in order.
void CopyOutBlocks(const std::vector<Block>& blocks, uint64_t length, uint8_t* out);

class Memory : public sc_core::sc_module,
               public LooselyTimedTarget,
               public TimedTarget,
               public Described {
 public:
  // `owner` names the chip in messages ("chip 3 (x=1, y=1)").
  // `timing` is the memory port's state, kept by the slice (sim/port_timing.h).
  // `core`: the TensorCore whose VMEM or SMEM this is (0 for HBM).
  Memory(sc_core::sc_module_name name, ChipId chip, std::string owner, MemorySpace space,
         uint64_t capacity, bool functional, MemoryPortTiming& timing, uint32_t core = 0);

  // Bound by the chip's router (or by a timing model in front of this memory).
  tlm::tlm_target_socket<32, tlm::tlm_base_protocol_types, 1, sc_core::SC_ZERO_OR_MORE_BOUND>
      socket;

  ChipId chip() const { return chip_; }
  MemorySpace space() const { return space_; }
  uint32_t core() const { return core_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t allocated() const { return allocated_; }
  BandwidthPort& port() { return timing_.port; }
  const std::string& timing_model() const { return timing_model_; }
  void set_timing_model(std::string name) { timing_model_ = std::move(name); }

  // Throws Error(kCapacity) listing every live allocation when `bytes` does not fit.
  uint32_t Allocate(uint64_t bytes, const std::string& label, Uninitialized fill = {});
  void Free(uint32_t index);
  // A DMA engine remembers what it found of the buffer (sim/dma_buffer_cache.h), which holds
  // until the buffer is freed: its Free adds one to `frees` (SliceState::buffer_frees), so
  // that every engine forgets. Frees of buffers no engine remembers (a program's
  // temporaries, which no DMA named) leave what the engines remember alone.
  void NoteRemembered(uint32_t index) { buffers_[index].remembered = true; }
  void CountFreesIn(uint64_t& frees) { frees_ = &frees; }
  bool Live(uint32_t index) const { return index < buffers_.size() && buffers_[index].live; }
  uint64_t Size(uint32_t index) const { return buffers_[index].size; }
  const std::string& Label(uint32_t index) const { return buffers_[index].label; }
  // The global address (sim/chunk.h) of byte `offset` of a buffer.
  uint64_t Address(uint32_t index, uint64_t offset) const;

  // Buffers read before anything wrote them (a load, or a DMA's source), each once, in the
  // order that happened: "'acc f32[8,128]' in VMEM of chip 0 (x=0)". Functional runs only.
  const std::vector<std::string>& unwritten_reads() const { return unwritten_reads_; }

  // Copies the box out of / into the buffer. No-ops in timing-only mode.
  void Gather(uint32_t index, const ByteBox& box, uint8_t* out) const;
  void Scatter(uint32_t index, const ByteBox& box, const uint8_t* in);
  void WriteAll(uint32_t index, const void* data, uint64_t size);
  std::vector<uint8_t> ReadAll(uint32_t index) const;
  // WriteAll of buffer `from_index` of `from` (as large as this one): their blocks are shared.
  void ShareAll(uint32_t index, Memory& from, uint32_t from_index);
  // Moves the bytes out, as blocks still shared with any buffer that holds them: the buffer
  // reads as never written afterwards.
  BlockBytes TakeBlocks(uint32_t index);

  // tlm_fw_transport_if: b_transport books the port for a chunk (TLM_IGNORE_COMMAND: the
  // bytes move by DMI) or moves a contiguous READ/WRITE and books the port for it.
  // get_direct_mem_ptr grants one block of a live buffer: for reading (TLM_READ_COMMAND) the
  // block as it is, read-only while another buffer shares it; for writing, the block made
  // this buffer's alone first. A grant holds until the next transaction on the memory (a
  // later DMA may share the block again), so take a new one for each access, as the DMA
  // engine does. transport_dbg copies bytes, or shares blocks (ShareBlocks).
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) override;

  ChunkTarget& chunk_timing() override { return timing_; }

  std::vector<Parameter> parameters() const override;

 private:
  struct Buffer {
    std::string label;
    uint64_t size = 0;
    uint64_t base = 0;  // offset in the memory's address space
    bool live = true;
    bool remembered = false;  // NoteRemembered: its Free counts in frees_
    BlockBytes bytes;
    mutable bool read_unwritten = false;  // noted in unwritten_reads_ (by const reads too)
  };
  void NoteUnwrittenRead(const Buffer& buffer) const;
  // The live buffer holding address-space offset `offset`, or null.
  Buffer* BufferAt(uint64_t offset);

  MemoryPortTiming& timing_;
  ChipId chip_;
  MemorySpace space_;
  uint32_t core_;
  int slot_;  // MemorySlot: where its addresses are
  bool functional_;
  std::string owner_;
  uint64_t capacity_;
  uint64_t allocated_ = 0;
  uint64_t next_base_ = 0;
  uint64_t* frees_ = nullptr;    // CountFreesIn's
  std::vector<Buffer> buffers_;  // in address order: bases only grow
  mutable std::vector<std::string> unwritten_reads_;
  std::string timing_model_ = "bandwidth";
};

}  // namespace tpusim::sim
