#include "sim/row_buffer_memory.h"

#include "sim/chunk.h"
#include "sim/memory.h"

namespace tpusim::sim {

RowBufferMemory::RowBufferMemory(sc_core::sc_module_name name, Memory& storage, uint64_t row_bytes,
                                 uint32_t banks, double row_miss_ns)
    : sc_module(name),
      socket("socket"),
      to_storage("to_storage"),
      storage_(storage),
      row_bytes_(row_bytes),
      row_miss_(NanosecondsToTime(row_miss_ns)),
      open_row_(banks, -1) {
  socket.bind(*this);
  to_storage.bind(*this);
  to_storage.bind(storage.socket);
}

Picoseconds RowBufferMemory::Occupy(uint64_t offset, uint64_t bytes) {
  uint64_t misses = 0;
  if (bytes > 0) {
    for (uint64_t row = offset / row_bytes_; row <= (offset + bytes - 1) / row_bytes_; ++row) {
      int64_t& open = open_row_[row % open_row_.size()];
      if (open == static_cast<int64_t>(row)) continue;
      open = static_cast<int64_t>(row);
      ++misses;
    }
  }
  rows_opened_ += misses;
  return storage_.port().Duration(bytes) + misses * row_miss_ / open_row_.size();
}

void RowBufferMemory::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const Picoseconds now = sc_core::sc_time_stamp().value();
  const uint64_t bytes = payload.get_data_length();
  if (payload.get_command() != tlm::TLM_IGNORE_COMMAND &&
      to_storage->transport_dbg(payload) != bytes) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  auto* chunk = payload.get_extension<ChunkExtension>();
  const Picoseconds duration = Occupy(AddressOffset(payload.get_address()), bytes);
  // The memory's own port keeps the statistics and the trace of what this model books.
  const Picoseconds start = storage_.port().ReserveFor(
      now, now + delay.value(), duration, bytes, chunk ? chunk->transfer : 0,
      chunk ? chunk->label : &storage_.port().name());
  delay = sc_core::sc_time::from_value(start + duration - now);
  if (chunk) {
    chunk->has_hop_start = true;
    chunk->hop_start = start;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool RowBufferMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
  return to_storage->get_direct_mem_ptr(payload, dmi);
}

unsigned int RowBufferMemory::transport_dbg(tlm::tlm_generic_payload& payload) {
  return to_storage->transport_dbg(payload);
}

void RowBufferMemory::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  socket->invalidate_direct_mem_ptr(start, end);
}

std::vector<Parameter> RowBufferMemory::parameters() const {
  return {{"row", FormatBytes(row_bytes_)},
          {"banks", FormatCount(open_row_.size())},
          {"row miss", FormatTime(row_miss_)},
          {"bandwidth", FormatRate(storage_.port().bytes_per_second())}};
}

MemoryModel RowBufferMemory::Model() {
  return MemoryModel{
      "row_buffer",
      "DRAM rows per bank: a chunk pays bytes / bandwidth plus row_miss_ns / banks per row it "
      "opens",
      {base::Param::Int("row_bytes", "bytes per DRAM row (page)")
           .Unit("bytes")
           .Default(1024)
           .Range(64, 1 << 20),
       base::Param::Int("banks", "banks that keep a row open each and open rows in parallel")
           .Unit("banks")
           .Default(64)
           .Range(1, 4096),
       base::Param::Double("row_miss_ns", "time to open a row (precharge and activate)")
           .Unit("ns")
           .Default(30.0)
           .Range(0.0, 1e6)},
      [](const char* module_name, Memory& storage, const ModelParameters& p) {
        auto module = std::make_unique<RowBufferMemory>(
            module_name, storage, static_cast<uint64_t>(p.at("row_bytes")),
            static_cast<uint32_t>(p.at("banks")), p.at("row_miss_ns"));
        MemoryTarget target;
        target.socket = &module->socket;
        target.module = std::move(module);
        return target;
      }};
}

namespace {
const MemoryModelRegistration kRowBuffer{RowBufferMemory::Model()};
}  // namespace

}  // namespace tpusim::sim
