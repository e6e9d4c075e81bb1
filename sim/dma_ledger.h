#pragma once

// What the DMA engines of a slice share: each DMA from start to landing (Transfer), the
// ledger of DMAs in flight (races, frees), and the pool of generic payloads chunks travel in.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <tlm>
#include <vector>

#include "sim/base_names.h"
#include "sim/block_bytes.h"
#include "sim/buffer_writers.h"
#include "sim/router.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class DmaDispatcher;
class Semaphore;
class SliceState;
struct Transfer;

// One DMA from start to landing. What every chunk reads comes first, the request after:
// on a pod the simulator cycles through thousands of these between two chunks of one.
struct Transfer {
  uint64_t sent = 0;
  uint64_t landed = 0;
  uint64_t bytes = 0;
  uint64_t chunk_bytes = 0;
  uint64_t id = 0;
  DmaDispatcher* dispatcher = nullptr;  // the issuing chip's
  // The request's semaphores, found once when it starts (null: no send semaphore). Chips
  // keep their semaphores in deques, so these stay put while kernels add more.
  Semaphore* send_semaphore = nullptr;
  Semaphore* recv_semaphore = nullptr;
  // The hops a chunk books, as the routers give them (Router::PathTo): the source memory,
  // then (unless the copy stays within one memory) the route's links and the destination.
  base::InlineVector<PathHop, 4> path;  // inline up to four hops: no heap block to miss per chunk
  bool within_one_memory = false;       // one transaction books the port for read and write
  bool through_tlm = false;             // EngineOptions::book_through_tlm
  bool source_dense = false;            // contiguous boxes: a chunk's address needs no walk
  bool destination_dense = false;
  int channel = -1;
  ChipId issuer = 0;
  uint32_t observed_id = 0;  // the access observer's name for it (sim/access_observer.h)
  traces::FlowId flow = 0;
  uint64_t source_base = 0;       // global address of the source buffer's first byte
  uint64_t destination_base = 0;  // ... and of the destination buffer's
  Picoseconds notify = 0;         // after a chunk lands, until its receive semaphore counts it
  int hops = 0;                   // links on the route
  DmaRequest request;
  // Next to the request's end (its label, which a landing reads anyway), not on a line of
  // their own that only the ledger would read at landing:
  bool landed_all = false;  // DmaLedger::Landed has run: no event of it is left
  // The writers of its destination it is one of (DmaLedger::CheckWriteRace), so that its
  // landing finds them without a lookup by buffer; null when it writes nothing.
  BufferWriters* writers = nullptr;
  // The payload between departure and landing; never zeroed, as the source fills it whole.
  std::unique_ptr<uint8_t[]> staging;
  // ... or, when source and destination are dense boxes of whole blocks, the source's blocks
  // (shared copy-on-write, sim/block_bytes.h), so no byte is copied.
  std::vector<Block> shared;

  // Every field as a new Transfer has it, but the path and the request keep their storage
  // (Start assigns the request whole and appends the path). Field by field: building a new
  // Transfer and moving it in constructed and moved a DmaRequest twice per DMA. A field
  // added above is reset here too.
  void Reuse() {
    sent = landed = bytes = chunk_bytes = id = 0;
    dispatcher = nullptr;
    send_semaphore = recv_semaphore = nullptr;
    path.clear();
    within_one_memory = through_tlm = source_dense = destination_dense = false;
    channel = -1;
    issuer = 0;
    observed_id = 0;
    flow = 0;
    source_base = destination_base = 0;
    notify = 0;
    hops = 0;
    staging.reset();
    shared.clear();
    landed_all = false;
    writers = nullptr;
  }
};

// The DMAs of the slice in start order, with stable addresses: the writers in flight per
// buffer (two writing the same bytes race), and what a buffer being freed is still used by.
// A traced run keeps every DMA, because the ports' trace slices name them until the end;
// an untraced one recycles the DMAs that have landed, so memory stays flat however many a
// run moves, and a new DMA reuses the path and boxes' storage of an old one instead
// of allocating its own (several allocations per DMA on a path that issues millions).
class DmaLedger {
 public:
  explicit DmaLedger(bool keep_settled) : keep_settled_(keep_settled) {}
  // A new DMA, numbered from 1 in start order.
  Transfer& Add();
  std::deque<std::unique_ptr<Transfer>>& transfers() { return transfers_; }
  // Two in-flight DMAs writing the same bytes: which one lands last is a race.
  void CheckWriteRace(Transfer& t, const SliceState& slice);
  void Landed(Transfer& t);
  // Forgets the landed DMAs at the front, unless the run keeps them.
  void Trim();
  // Throws Error(kRace) while a DMA still reads or writes `buffer`.
  void CheckFree(BufferHandle buffer, const std::string& what, const std::string& label);

 private:
  static bool Settled(const Transfer& t) {
    return t.landed_all && t.sent == t.bytes && t.landed == t.bytes;
  }
  bool keep_settled_;
  uint64_t started_ = 0;
  std::deque<std::unique_ptr<Transfer>> transfers_;
  size_t settled_ = 0;                            // transfers_[0, this) have all landed
  std::vector<std::unique_ptr<Transfer>> spare_;  // trimmed, for Add to reuse
  // The writers of the buffer with key `key` (BufferKey).
  BufferWriters& WritersOf(uint64_t key);
  // Each buffer's writers by its key, in an open-addressed table (linear probing, at most
  // half full) of keys and pointers: a lookup of a buffer whose DMAs ran long ago reads one
  // line of it, where an unordered_map read a bucket, the node before and the node, each
  // a cache miss on a pod. The writers stay put in a deque (Transfer::writers holds them).
  struct Slot {
    uint64_t key = 0;
    BufferWriters* writers = nullptr;  // null: empty
  };
  std::vector<Slot> slots_;
  size_t used_ = 0;
  std::deque<BufferWriters> writers_;
  // The buffer the last DMA wrote, and its writers: a kernel's copies mostly go to the
  // buffer its previous one went to.
  uint64_t last_buffer_ = ~uint64_t{0};
  BufferWriters* last_writers_ = nullptr;
};

// Generic payloads, reused: a chunk acquires one, the router chain books it, it returns.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  PayloadPool() = default;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;
  // Acquired (reference count 1), with a ChunkExtension; release() gives it back.
  tlm::tlm_generic_payload& Acquire();
  void free(tlm::tlm_generic_payload* payload) override;

 private:
  std::vector<tlm::tlm_generic_payload*> free_;
  std::vector<tlm::tlm_generic_payload*> all_;
};

}  // namespace tpusim::sim
