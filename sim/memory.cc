#include "sim/memory.h"

#include <algorithm>
#include <cstring>
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
  buffers_.push_back(Buffer{label, bytes, next_base_, true, fill, {}});
  next_base_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return static_cast<uint32_t>(buffers_.size() - 1);
}

void Memory::Free(uint32_t index) {
  Buffer& buffer = buffers_[index];
  if (!buffer.live) return;
  buffer.live = false;
  allocated_ -= buffer.size;
  std::vector<uint8_t>().swap(buffer.bytes);
}

std::vector<uint8_t>& Memory::Materialize(Buffer& buffer) {
  if (buffer.bytes.size() != buffer.size) {
    buffer.bytes.resize(buffer.size);  // zeros: a zero pattern needs no second pass
    if (buffer.fill.pattern != 0 && buffer.fill.element_bytes != 0)
      buffer.fill.Fill(0, buffer.size, buffer.bytes.data());
  }
  return buffer.bytes;
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
  if (!buffer.bytes.empty()) return GatherBox(buffer.bytes.data(), box, out);
  if (box.bytes() > 0) NoteUnwrittenRead(buffer);
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    buffer.fill.Fill(offset, run, out);
    out += run;
  });
}

void Memory::Scatter(uint32_t index, const ByteBox& box, const uint8_t* in) {
  if (!functional_) return;
  ScatterBox(Materialize(buffers_[index]).data(), box, in);
}

void Memory::WriteAll(uint32_t index, const void* data, uint64_t size) {
  if (!functional_) return;
  auto& bytes = Materialize(buffers_[index]);
  std::memcpy(bytes.data(), data, size);
}

std::vector<uint8_t> Memory::ReadAll(uint32_t index) const {
  const Buffer& buffer = buffers_[index];
  if (!buffer.bytes.empty() || !functional_) return buffer.bytes;
  std::vector<uint8_t> unwritten(buffer.size);
  buffer.fill.Fill(0, buffer.size, unwritten.data());
  return unwritten;
}

std::vector<uint8_t> Memory::TakeAll(uint32_t index) {
  Buffer& buffer = buffers_[index];
  if (buffer.bytes.empty()) return ReadAll(index);
  return std::exchange(buffer.bytes, {});
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
  Buffer* buffer = functional_ ? BufferAt(AddressOffset(payload.get_address())) : nullptr;
  if (!buffer) return false;
  if (payload.is_read() && buffer->bytes.empty()) NoteUnwrittenRead(*buffer);
  dmi.set_dmi_ptr(Materialize(*buffer).data());
  dmi.set_start_address(MakeAddress(chip_, slot_, buffer->base));
  dmi.set_end_address(MakeAddress(chip_, slot_, buffer->base + buffer->size - 1));
  dmi.allow_read_write();
  return true;
}

unsigned int Memory::transport_dbg(tlm::tlm_generic_payload& payload) {
  const uint64_t offset = AddressOffset(payload.get_address());
  const uint64_t length = payload.get_data_length();
  Buffer* buffer = functional_ ? BufferAt(offset) : nullptr;
  if (!buffer || offset + length > buffer->base + buffer->size) return 0;
  if (payload.is_read() && buffer->bytes.empty()) NoteUnwrittenRead(*buffer);
  uint8_t* bytes = Materialize(*buffer).data() + (offset - buffer->base);
  if (payload.is_read()) std::memcpy(payload.get_data_ptr(), bytes, length);
  if (payload.is_write()) std::memcpy(bytes, payload.get_data_ptr(), length);
  return static_cast<unsigned int>(length);
}

std::vector<Parameter> Memory::parameters() const {
  return {{"capacity", FormatBytes(capacity_)},
          {"bandwidth", FormatRate(timing_.port.bytes_per_second())},
          {"timing", timing_model_}};
}

}  // namespace tpusim::sim
