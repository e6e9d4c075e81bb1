#pragma once

// A chip's DMA engine at work: `channels` DMAs move data at once, further starts queue in
// order. A DMA an engine takes moves its first byte `issue_latency` later (the descriptor's
// fetch and decode). It cuts each DMA into chunks and books every chunk on its path
// (sim/chunk.h), then schedules the chunk's departure and landing on the slice's calendar; a
// chunk from another chip counts on its receive semaphore the slice's signal latency after it
// lands. No thread per DMA: the calendar calls back when a chunk's work is done.
//
// It books the hops that are the model's own memories and links directly (ChunkTarget), and
// sends any other target, such as a memory model of the user's, a TLM-2.0 transaction
// through the DmaEngine module's initiator socket. In functional runs the DMA's bytes move by
// DMI (or debug transport) through that socket: read from the source when the last chunk
// leaves (the sender may reuse the buffer after wait_send), written to the destination when
// it lands.
//
// The dispatcher is the DmaEngine module's working state, kept in the slice's hot arena.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <tlm>
#include <vector>

#include "sim/base_names.h"
#include "sim/chunk.h"
#include "sim/dma_buffer_cache.h"
#include "sim/dma_ledger.h"
#include "sim/path_cache.h"
#include "sim/router.h"
#include "sim/slice_state.h"

namespace tpusim::sim {

class Chip;
class DmaEngine;

class DmaDispatcher {
 public:
  DmaDispatcher(SliceState& slice, DmaLedger& ledger, Chip& chip, DmaEngine& engine,
                uint32_t channels, uint64_t chunk_bytes, Picoseconds issue_latency);
  DmaDispatcher(const DmaDispatcher&) = delete;
  DmaDispatcher& operator=(const DmaDispatcher&) = delete;

  uint32_t channels() const { return channels_; }
  uint64_t chunk_bytes() const { return chunk_bytes_; }
  Picoseconds issue_latency() const { return issue_latency_; }
  DmaLedger& ledger() { return ledger_; }

  // Checks the request, then queues it behind busy channels. Never blocks.
  void Start(const DmaRequest& request, uint32_t core = 0);

 private:
  // What Check finds of the request: its semaphores (send: null without one) and the global
  // addresses of its buffers' first bytes.
  struct Checked {
    Semaphore* recv = nullptr;
    Semaphore* send = nullptr;
    uint64_t source_base = 0;
    uint64_t destination_base = 0;
  };
  // Throws Error naming the first thing wrong with the request (sim/dma_check.cc).
  Checked Check(const DmaRequest& request);
  // v5e routes a Pallas kernel's remote DMA only to a power-of-two offset (docs/model.md).
  void CheckPowerOfTwoOffset(const DmaRequest& request) const;
  void Admit();
  void Begin(Transfer& t, int channel);
  // What a chunk does touches only the transfer, its path and the slice (the calendar
  // calls these with the SliceState); the dispatcher only when a DMA starts or ends.
  static void ReserveChunk(SliceState& slice, Transfer& t);
  // Books the hops of one chunk of `bytes` as transactions (EngineOptions::book_through_tlm,
  // or a target that is not the model's own).
  void BookThroughTlm(Transfer& t, size_t hop, bool link, uint64_t bytes, ChunkSchedule& schedule);
  // Where the byte `sent` bytes into the DMA lies, on the source or the destination side.
  static uint64_t ChunkAddress(uint64_t base, const ByteBox& box, bool dense, uint64_t sent);
  // Inlined into RunChunkEvent, their one caller, as nearly every event is one of them.
  [[gnu::always_inline]] static void OnDeparted(SliceState& slice, Transfer& t, uint64_t bytes);
  [[gnu::always_inline]] static void OnLanded(SliceState& slice, Transfer& t, uint64_t bytes);
  // The last chunk has left: the channel is free, and the bytes leave the source.
  void Departed(Transfer& t);
  // The last chunk (of `bytes`) has landed.
  void Landed(Transfer& t, uint64_t bytes);
  // For the trace's counter only.
  void BytesInFlight(int64_t delta);
  // Copies a DMA's bytes out of its source, or into its destination, by DMI (or debug
  // transport when the target grants no DMI).
  // Moves a dense box's blocks instead of its bytes (Transfer::shared); false if it cannot.
  bool ShareBlocksOf(Transfer& t, bool into);
  void MoveBytes(const Region& region, uint64_t base, uint8_t* data, bool into);

  // Chunk events go to the calendar as a plain function and two integers (no allocation).
  enum ChunkEvent : uint64_t { kDeparted, kDepartedThenReserve, kReserve, kLanded };
  // Inlined: a chunk's booking schedules two or three events.
  [[gnu::always_inline]] static void Schedule(SliceState& slice, Picoseconds now, Picoseconds when,
                                              ChunkEvent event, Transfer& t, uint64_t bytes = 0);
  static void RunChunkEvent(void* slice, uint64_t transfer, uint64_t event_and_bytes);
  // The calendar's prefetch hooks for chunk events (EventQueue::SetPrefetch); they change
  // nothing. Far ahead, the lines of the Transfer the event reads: the first (counts and
  // semaphores) for all, the path and the rest of what a booking reads only for an event
  // that books the next chunk. Nearer, the semaphore the event will count on and, for one
  // that books, its hops' ports.
  static void PrefetchTransfer(void* slice, uint64_t transfer, uint64_t event_and_bytes);
  static void PrefetchChunkEvent(void* slice, uint64_t transfer, uint64_t event_and_bytes);

  SliceState& slice_;
  DmaLedger& ledger_;
  Chip& chip_;         // its modules are touched once per DMA, not per chunk
  DmaEngine& engine_;  // the initiator socket, for transactions and DMI
  ChipId id_;
  uint64_t chunk_bytes_;
  Picoseconds issue_latency_;
  uint32_t channels_;             // at most 64 (the topology's range)
  bool power_of_two_offsets_;     // a physical v5e: CheckPowerOfTwoOffset applies
  uint64_t busy_ = 0;             // a bit per channel
  std::vector<Transfer*> queue_;  // waiting for a channel, from queue_head_ on
  size_t queue_head_ = 0;
  int64_t bytes_in_flight_ = 0;
  PayloadPool payloads_;
  // What the engine remembers of its last DMAs, a line or two read per DMA: kept off the hot
  // arena, which holds what every chunk reads (sim/hot_arena.h).
  struct Remembered {
    PathCache paths;         // Start
    DmaBufferCache buffers;  // Check and Start
  };
  std::unique_ptr<Remembered> remembered_ = std::make_unique<Remembered>();
};

}  // namespace tpusim::sim
