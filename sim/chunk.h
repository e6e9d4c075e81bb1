#pragma once

// What travels between the model's modules: a DMA chunk as a TLM-2.0 generic payload.
//
// A chunk's timing is booked when the DMA engine schedules it, ahead of SystemC time (the
// loosely-timed style's temporal decoupling): the engine sends a TLM_IGNORE_COMMAND
// transaction through its router to the source memory (the read) and another through the
// routers and links of the route to the destination memory (the write). Each target holds
// its port for the chunk's bytes and annotates the delay; the ChunkExtension carries the
// chunk's schedule from hop to hop. The payload bytes do not ride along: they move by DMI
// when the DMA's last chunk leaves the source and when it lands.
//
// Addresses are global: a chip, one of its memories, and a byte in that memory's address
// space (where Memory places each buffer).

#include <algorithm>
#include <cstdint>
#include <string>
#include <tlm>

#include "sim/base_names.h"
#include "sim/torus.h"

namespace tpusim::sim {

constexpr int kAddressChipShift = 48;
constexpr int kAddressSlotShift = 42;  // offsets up to 4 TiB, past chip.*.capacity's range
constexpr uint64_t kAddressOffsetMask = (uint64_t{1} << kAddressSlotShift) - 1;

// The most TensorCores a chip may have (chip.tensor_cores' range): each brings a VMEM and
// an SMEM of its own.
constexpr uint32_t kMaxTensorCores = 4;
constexpr int kMaxMemorySlots = 1 + 2 * static_cast<int>(kMaxTensorCores);

// A chip's memories, numbered: HBM 0, then each core's VMEM and SMEM (core 0's are 1 and 2,
// MemorySpace's own numbers, so a single-core chip numbers them as MemorySpace does).
inline int MemorySlot(MemorySpace space, uint32_t core) {
  if (space == MemorySpace::kHbm) return 0;
  return 1 + 2 * static_cast<int>(core) + (space == MemorySpace::kSmem ? 1 : 0);
}
inline MemorySpace SlotSpace(int slot) {
  if (slot == 0) return MemorySpace::kHbm;
  return slot % 2 == 1 ? MemorySpace::kVmem : MemorySpace::kSmem;
}
inline uint32_t SlotCore(int slot) {
  return slot == 0 ? 0 : static_cast<uint32_t>((slot - 1) / 2);
}

inline uint64_t MakeAddress(ChipId chip, int slot, uint64_t offset) {
  return uint64_t{chip} << kAddressChipShift |
         uint64_t{static_cast<uint32_t>(slot)} << kAddressSlotShift | offset;
}
// One number per buffer of the slice: its chip, memory slot and index (the ledger's and the
// race detector's maps key on it).
inline uint64_t BufferKey(const BufferHandle& b) {
  return (static_cast<uint64_t>(b.chip) * kMaxMemorySlots +
          static_cast<uint64_t>(MemorySlot(b.space, b.core)))
             << 32 |
         b.index;
}

// HBM, or core 0's VMEM or SMEM.
inline uint64_t MakeAddress(ChipId chip, MemorySpace space, uint64_t offset) {
  return MakeAddress(chip, MemorySlot(space, 0), offset);
}
inline ChipId AddressChip(uint64_t address) {
  return static_cast<ChipId>(address >> kAddressChipShift);
}
// The memory slot (MemorySlot) an address is in.
inline int AddressSlot(uint64_t address) {
  return static_cast<int>((address >> kAddressSlotShift) & 63);
}
inline MemorySpace AddressSpace(uint64_t address) {
  return SlotSpace(AddressSlot(address));
}
inline uint64_t AddressOffset(uint64_t address) {
  return address & kAddressOffsetMask;
}

// The schedule of one chunk across its hops (source memory, links in route order,
// destination memory). By default data streams through the hops (cut-through): a hop may
// start once the chunk's head reaches it, and a link adds its latency. Memory is much faster
// than a link, and in hardware its reads interleave finely with other traffic, so a link fed
// from memory is only held back until it could no longer finish after the read; a link fed by
// a slower link, until its last byte has come in. Store-and-forward routers
// (ici.forwarding) take the whole chunk in before they pass it on: a hop after a link starts
// once the chunk's last byte has crossed it. The source paces itself to the slowest hop, as
// credit flow control would, so one DMA cannot queue up a link's whole future.
class ChunkSchedule {
 public:
  explicit ChunkSchedule(Picoseconds now = 0, bool store_and_forward = false)
      : now_(now),
        store_and_forward_(store_and_forward),
        previous_start_(now),
        previous_end_(now),
        pace_(now),
        arrival_(now) {}

  Picoseconds now() const { return now_; }
  bool store_and_forward() const { return store_and_forward_; }
  // The earliest a hop can start. A link passes the time it holds the link for.
  Picoseconds Enter(bool link, Picoseconds duration) {
    Picoseconds earliest = now_;
    if (!first_) {
      if (previous_link_) {
        head_latency_ += previous_latency_;
        // Stored at the router: the next hop sees the head only after the whole chunk.
        if (store_and_forward_) head_latency_ += previous_end_ - previous_start_;
      }
      if (!previous_link_ && link) {
        earliest = std::max(earliest, previous_end_ > duration ? previous_end_ - duration : 0);
      } else if (previous_link_ && store_and_forward_) {
        earliest = std::max(earliest, previous_end_ + previous_latency_);
      } else {
        earliest = std::max(earliest, previous_start_ + (previous_link_ ? previous_latency_ : 0));
        // A link fed by a slower link (an override) cannot send the last byte before it has
        // come in. Links of one speed start a latency apart, which this already allows.
        if (previous_link_ && link && previous_end_ + previous_latency_ > duration)
          earliest = std::max(earliest, previous_end_ + previous_latency_ - duration);
      }
    }
    return earliest;
  }
  // The hop held its port over [start, end); a link's head reaches the next hop `latency`
  // later.
  void Record(bool link, Picoseconds start, Picoseconds end, Picoseconds latency) {
    pace_ = std::max(pace_, end - std::min(end, head_latency_));
    if (link && first_link_end_ == 0) first_link_end_ = end;
    arrival_ = std::max(arrival_, end + (link ? latency : 0));
    previous_start_ = start;
    previous_end_ = end;
    previous_link_ = link;
    previous_latency_ = link ? latency : 0;
    first_ = false;
  }

  // When the chunk has left the chip: its first link is done with it (or, for a copy
  // within the chip, when it lands).
  Picoseconds departure() const { return first_link_end_ ? first_link_end_ : arrival_; }
  Picoseconds arrival() const { return arrival_; }
  // When the source may book its next chunk.
  Picoseconds pace() const { return std::max(pace_, departure()); }

 private:
  Picoseconds now_;
  bool store_and_forward_;
  bool first_ = true;
  Picoseconds previous_start_;
  Picoseconds previous_end_;
  bool previous_link_ = false;
  Picoseconds previous_latency_ = 0;
  Picoseconds head_latency_ = 0;  // what the hops so far add before the head reaches the next
  Picoseconds pace_;
  Picoseconds first_link_end_ = 0;
  Picoseconds arrival_;
};

// The part of a chunk transaction that is tpusim's own. Targets that know it use the
// schedule (links must); a memory target needs only the LT delay annotation and may set
// `hop_start`.
class ChunkExtension : public tlm::tlm_extension<ChunkExtension> {
 public:
  uint64_t transfer = 0;               // the DMA, for the port's trace
  const std::string* label = nullptr;  // the DMA's label, owned by the DMA engine
  // A copy within one memory reads and writes through the same port: the one transaction
  // stands for both, and data_length counts both.
  bool read_and_write = false;
  ChunkSchedule schedule;
  // The links of the write's route, in order (source routing): each router takes the next
  // one instead of working it out again. Null: routers decide by the address.
  const LinkId* route = nullptr;
  uint32_t next_link = 0;
  // False when the initiator calls every hop of the path itself (DmaEngine): a link then
  // books its own time and does not pass the transaction on.
  bool forward = true;
  // Set by a memory target: when it began on the chunk. Unset, the router takes the time
  // the chunk reached it.
  bool has_hop_start = false;
  Picoseconds hop_start = 0;
  // A semaphore signal, not a DMA chunk: one packet of kSignalBytes that crosses the links of
  // its route as a chunk does and ends at the destination's router, which changes the
  // semaphore (no memory hop). The model's links let it pass between the chunks booked on
  // them (LinkTiming::BookSignal); a link model of the user's times it as it sees fit.
  bool signal = false;

  tlm::tlm_extension_base* clone() const override { return new ChunkExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const ChunkExtension&>(other);
  }
};

// What a semaphore signal occupies on each link it crosses: one small packet (its semaphore's
// address and the increment, padded as a network packet is; a modelling choice, as no TPU
// figure is published: docs/time-model.md, "Signals on the route").
constexpr uint64_t kSignalBytes = 64;
// A signal's transaction addresses its semaphore: the chip, memory slot 0 and the semaphore's
// index, so routers steer it by the chip as any chunk.
inline uint64_t SignalAddress(ChipId chip, uint32_t semaphore) {
  return MakeAddress(chip, 0, semaphore);
}

// The model's own targets (a Memory with its bandwidth port, an IciLink) also take a chunk's
// booking as a direct call: the booking their b_transport does once it has unpacked the
// payload. A DMA engine books these directly, because a transaction per hop of every chunk
// costs the simulator about twice its time (docs/model.md); any other target, such as a
// memory model of the user's, gets a TLM transaction. EngineOptions::book_through_tlm sends
// transactions to every hop, and the tests check that both ways give the same timing.
class ChunkTarget {
 public:
  // Books this hop of a chunk of `bytes` into `schedule`.
  virtual void BookChunk(ChunkSchedule& schedule, uint64_t bytes, uint64_t transfer,
                         const std::string* label) = 0;
  // Books this hop of a semaphore signal of `bytes` (ChunkExtension::signal). Links let it
  // pass between chunks; any other target books it as a small chunk.
  virtual void BookSignal(ChunkSchedule& schedule, uint64_t bytes, const std::string* label) {
    BookChunk(schedule, bytes, 0, label);
  }

 protected:
  ~ChunkTarget() = default;
};

// Books a memory hop of `chunk`: the target sees, as the LT delay, when the chunk reaches it
// and says when it is done (and, if it knows, when it began). Any LT target can stand in for
// a memory this way. Routers and DMA engines call it.
inline void BookMemoryHop(tlm::tlm_fw_transport_if<>& target, tlm::tlm_generic_payload& payload,
                          ChunkExtension& chunk) {
  ChunkSchedule& schedule = chunk.schedule;
  const Picoseconds earliest = schedule.Enter(/*link=*/false, 0);
  sc_core::sc_time delay = sc_core::sc_time::from_value(earliest - schedule.now());
  chunk.has_hop_start = false;
  payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  target.b_transport(payload, delay);
  const Picoseconds end = schedule.now() + delay.value();
  schedule.Record(/*link=*/false, chunk.has_hop_start ? chunk.hop_start : earliest, end, 0);
}

}  // namespace tpusim::sim
