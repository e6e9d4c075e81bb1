#include "sim/memory.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "base/errors.h"
#include "sim/byte_box.h"
#include "sim/chunk.h"

namespace tpusim::sim {

namespace {
constexpr uint64_t kAlignment = 64;  // buffers start on cache-line boundaries
}  // namespace

Memory::Memory(sc_core::sc_module_name name, ChipId chip, std::string owner, MemorySpace space,
               uint64_t capacity, bool functional, MemoryPortTiming& timing, uint32_t core)
    : sc_module(name),
      socket("socket"),
      timing_(timing),
      chip_(chip),
      space_(space),
      core_(core),
      slot_(MemorySlot(space, core)),
      functional_(functional),
      owner_(std::move(owner)),
      capacity_(capacity) {
  socket.bind(*this);
}

uint32_t Memory::Allocate(uint64_t bytes, const std::string& label, Uninitialized fill) {
  if (allocated_ + bytes > capacity_) {
    std::string breakdown;
    for (const auto& b : buffers_) {
      if (b.live) breakdown += "\n    " + FormatBytes(b.size) + "  " + b.label;
    }
    breakdown += "\n    " + FormatBytes(bytes) + "  " + label + "  <- does not fit";
    throw Error(ErrorKind::kCapacity,
                std::string(MemorySpaceName(space_)) + " of " + owner_ +
                    " is over capacity: " + FormatBytes(allocated_ + bytes) + " requested, " +
                    FormatBytes(capacity_) + " available. Allocations:" + breakdown +
                    "\n  Use smaller blocks, fewer buffers, or fewer pipeline stages.");
  }
  // Bases only grow, so a buffer's address is never reused within a run; the address space
  // (2^46 bytes) outlasts any run's allocations by far, but say so if one gets there.
  if (next_base_ + bytes > kAddressOffsetMask) {
    throw Error(ErrorKind::kCapacity, std::string(MemorySpaceName(space_)) + " of " + owner_ +
                                          " ran out of address space after " +
                                          std::to_string(buffers_.size()) +
                                          " allocations; allocate fewer, larger buffers.");
  }
  allocated_ += bytes;
  buffers_.push_back(Buffer{label, bytes, next_base_, true, false, BlockBytes(bytes, fill)});
  next_base_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return static_cast<uint32_t>(buffers_.size() - 1);
}

void Memory::Free(uint32_t index) {
  Buffer& buffer = buffers_[index];
  if (buffer.remembered && frees_) ++*frees_;
  if (!buffer.live) return;
  buffer.live = false;
  allocated_ -= buffer.size;
  buffer.bytes.Clear();
}

void Memory::NoteUnwrittenRead(const Buffer& buffer) const {
  if (buffer.read_unwritten) return;
  buffer.read_unwritten = true;
  unwritten_reads_.push_back("'" + buffer.label + "' in " + MemorySpaceName(space_) + " of " +
                             owner_);
}

void Memory::Gather(uint32_t index, const ByteBox& box, uint8_t* out) const {
  if (!functional_) return;
  const Buffer& buffer = buffers_[index];
  if (!buffer.bytes.written() && box.bytes() > 0) NoteUnwrittenRead(buffer);
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    buffer.bytes.Read(offset, run, out);
    out += run;
  });
}

void Memory::Scatter(uint32_t index, const ByteBox& box, const uint8_t* in) {
  if (!functional_) return;
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    buffers_[index].bytes.Write(offset, run, in);
    in += run;
  });
}

void Memory::WriteAll(uint32_t index, const void* data, uint64_t size) {
  if (!functional_) return;
  buffers_[index].bytes.Write(0, size, static_cast<const uint8_t*>(data));
}

std::vector<uint8_t> Memory::ReadAll(uint32_t index) const {
  const Buffer& buffer = buffers_[index];
  if (!functional_) return {};
  return buffer.bytes.ReadAll();
}

void Memory::ShareAll(uint32_t index, Memory& from, uint32_t from_index) {
  if (!functional_) return;
  BlockBytes& source = from.buffers_[from_index].bytes;
  std::vector<Block> blocks;
  if (!source.Share(0, source.size(), blocks) ||
      !buffers_[index].bytes.Adopt(0, buffers_[index].size, blocks)) {
    const std::vector<uint8_t> bytes = source.ReadAll();
    WriteAll(index, bytes.data(), bytes.size());
  }
}

BlockBytes Memory::TakeBlocks(uint32_t index) {
  Buffer& buffer = buffers_[index];
  BlockBytes taken = buffer.bytes;
  buffer.bytes.Clear();
  return taken;
}

uint64_t Memory::Address(uint32_t index, uint64_t offset) const {
  return MakeAddress(chip_, slot_, buffers_[index].base + offset);
}

Memory::Buffer* Memory::BufferAt(uint64_t offset) {
  auto it = std::upper_bound(buffers_.begin(), buffers_.end(), offset,
                             [](uint64_t o, const Buffer& b) { return o < b.base; });
  if (it == buffers_.begin()) return nullptr;
  Buffer& buffer = *std::prev(it);
  if (!buffer.live || offset >= buffer.base + buffer.size) return nullptr;
  return &buffer;
}

void Memory::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  auto* chunk = payload.get_extension<ChunkExtension>();
  // A chunk carries the time it is booked at (sc_time_stamp() in the model; the module tests
  // book at times of their own).
  const Picoseconds now = chunk ? chunk->schedule.now() : sc_core::sc_time_stamp().value();
  const uint64_t bytes = payload.get_data_length();
  if (payload.get_command() != tlm::TLM_IGNORE_COMMAND && transport_dbg(payload) != bytes) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const Picoseconds start =
      port().Reserve(now, now + delay.value(), bytes, chunk ? chunk->transfer : 0,
                     chunk ? chunk->label : &port().name());
  delay = sc_core::sc_time::from_value(start + port().Duration(bytes) - now);
  if (chunk) {
    chunk->has_hop_start = true;
    chunk->hop_start = start;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool Memory::get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
  const uint64_t offset = AddressOffset(payload.get_address());
  Buffer* buffer = functional_ ? BufferAt(offset) : nullptr;
  if (!buffer) return false;
  BlockBytes& bytes = buffer->bytes;
  const uint64_t within = offset - buffer->base;
  const uint64_t start = bytes.BlockStart(within);
  if (payload.is_write()) {
    dmi.set_dmi_ptr(bytes.Writable(within));
    dmi.allow_read_write();
  } else {
    if (!bytes.written()) NoteUnwrittenRead(*buffer);
    // Read-only while shared: a write through the pointer would show in the other buffers.
    dmi.set_dmi_ptr(const_cast<uint8_t*>(bytes.Readable(within)));
    if (bytes.Shared(within)) {
      dmi.allow_read();
    } else {
      dmi.allow_read_write();
    }
  }
  dmi.set_start_address(MakeAddress(chip_, slot_, buffer->base + start));
  dmi.set_end_address(
      MakeAddress(chip_, slot_, buffer->base + start + bytes.BlockLength(within) - 1));
  return true;
}

unsigned int Memory::transport_dbg(tlm::tlm_generic_payload& payload) {
  const uint64_t offset = AddressOffset(payload.get_address());
  const uint64_t length = payload.get_data_length();
  Buffer* buffer = functional_ ? BufferAt(offset) : nullptr;
  if (!buffer || offset + length > buffer->base + buffer->size) return 0;
  const uint64_t within = offset - buffer->base;
  auto* share = payload.get_extension<ShareBlocks>();
  if (share && payload.get_command() == tlm::TLM_IGNORE_COMMAND) {
    if (!share->into && !buffer->bytes.written()) NoteUnwrittenRead(*buffer);
    share->done = share->into ? buffer->bytes.Adopt(within, length, share->blocks)
                              : buffer->bytes.Share(within, length, share->blocks);
    return share->done ? static_cast<unsigned int>(length) : 0;
  }
  if (payload.is_read() && !buffer->bytes.written()) NoteUnwrittenRead(*buffer);
  if (payload.is_read()) buffer->bytes.Read(within, length, payload.get_data_ptr());
  if (payload.is_write()) buffer->bytes.Write(within, length, payload.get_data_ptr());
  return static_cast<unsigned int>(length);
}

bool TransportBlocks(tlm::tlm_fw_transport_if<>& target, uint64_t address, uint64_t length,
                     std::vector<Block>& blocks, bool into) {
  if (length == 0 || length > std::numeric_limits<unsigned int>::max()) return false;
  tlm::tlm_generic_payload payload;
  ShareBlocks share;
  if (into) share.blocks.swap(blocks);
  share.into = into;
  payload.set_command(tlm::TLM_IGNORE_COMMAND);
  payload.set_address(address);
  payload.set_data_ptr(nullptr);
  payload.set_data_length(static_cast<unsigned int>(length));
  payload.set_extension(&share);
  const bool shared = target.transport_dbg(payload) == length && share.done;
  payload.clear_extension(&share);  // it lives on this stack, not the payload's
  if (into || shared) share.blocks.swap(blocks);
  return shared;
}

void CopyOutBlocks(const std::vector<Block>& blocks, uint64_t length, uint8_t* out) {
  for (const Block& block : blocks) {
    const uint64_t run = std::min(length, BlockBytes::kBlockBytes);
    std::memcpy(out, block.get(), run);
    out += run;
    length -= run;
  }
}

std::vector<Parameter> Memory::parameters() const {
  return {{"capacity", FormatBytes(capacity_)},
          {"bandwidth", FormatRate(timing_.port.bytes_per_second())},
          {"timing", timing_model_}};
}

}  // namespace tpusim::sim
