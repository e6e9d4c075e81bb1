#include "sim/dma_dispatcher.h"

#include <algorithm>
#include <bit>
#include <new>

#include "sim/byte_box.h"
#include "sim/chip.h"
#include "sim/dma_engine.h"
#include "sim/memory.h"

namespace tpusim::sim {

DmaDispatcher::DmaDispatcher(SliceState& slice, DmaLedger& ledger, Chip& chip, DmaEngine& engine,
                             uint32_t channels, uint64_t chunk_bytes, Picoseconds issue_latency)
    : slice_(slice),
      ledger_(ledger),
      chip_(chip),
      engine_(engine),
      id_(chip.id()),
      chunk_bytes_(chunk_bytes),
      issue_latency_(issue_latency),
      channels_(channels),
      power_of_two_offsets_(slice.topology().chip().generation() == config::V5E &&
                            !slice.topology().allow_nonphysical()) {
  // Every chip's dispatcher sets the same hook; the calendar keeps one.
  slice.calendar().SetPrefetch(&DmaDispatcher::RunChunkEvent, &DmaDispatcher::PrefetchTransfer,
                               &DmaDispatcher::PrefetchChunkEvent);
}

inline void DmaDispatcher::Schedule(SliceState& slice, Picoseconds now, Picoseconds when,
                                    ChunkEvent event, Transfer& t, uint64_t bytes) {
  slice.calendar().AtFrom(now, when, &DmaDispatcher::RunChunkEvent, &slice,
                          reinterpret_cast<uintptr_t>(&t), bytes << 2 | event);
}

void DmaDispatcher::Start(const DmaRequest& request, uint32_t core) {
  const Checked checked = Check(request);
  const ChipId issuer = id_;
  const Picoseconds now = EventQueue::Now();
  AccessObserver* observer = slice_.observer();
  const uint32_t observed_id = observer ? observer->DmaStarted(issuer, core, request, now) : 0;
  Transfer& t = ledger_.Add();
  t.observed_id = observed_id;
  t.issuer = issuer;
  t.request = request;
  t.bytes = request.source.box.bytes();
  const BufferHandle& source = request.source.buffer;
  const BufferHandle& destination = request.destination.buffer;
  t.source_base = checked.source_base;
  t.destination_base = checked.destination_base;
  // One memory is one chip's space of one core: a copy between the two cores' VMEMs of a
  // megacore chip reads one port and writes the other (docs/time-model.md).
  t.within_one_memory = source.chip == destination.chip && source.space == destination.space &&
                        source.core == destination.core;
  t.source_dense = BoxIsDense(request.source.box);
  t.destination_dense = BoxIsDense(request.destination.box);
  t.dispatcher = this;
  t.recv_semaphore = checked.recv;
  t.send_semaphore = checked.send;
  t.chunk_bytes = chunk_bytes_;
  t.through_tlm = slice_.run().options().book_through_tlm;
  // The routers are walked only for memories this engine has not sent between lately.
  t.path = remembered_->paths.Find(
      PathCache::KeyOf(t.source_base, t.destination_base, t.within_one_memory),
      [&](PathCache::Path& path) {
        Router& router = chip_.router();
        router.PathTo(t.source_base, path);
        if (!t.within_one_memory) router.PathTo(t.destination_base, path);
      });
  // The path is the source memory, the route's links, then the destination memory.
  t.hops = t.within_one_memory ? 0 : static_cast<int>(t.path.size()) - 2;
  // The receiver learns of bytes from another chip through its semaphore, a signal's latency
  // after they land.
  t.notify = destination.chip != issuer ? slice_.signal_latency() : 0;
  if (destination.chip != issuer) t.flow = slice_.run().NewFlow();
  ++slice_.run().stats().dmas;
  slice_.run().stats().dma_bytes += t.bytes;
  ledger_.CheckWriteRace(t, slice_);
  queue_.push_back(&t);
  Admit();
}

void DmaDispatcher::Admit() {
  while (queue_head_ < queue_.size()) {
    // The lowest free channel, as a search of a bool per channel would find it.
    const uint64_t free =
        ~busy_ & (channels_ == 64 ? ~uint64_t{0} : (uint64_t{1} << channels_) - 1);
    if (free == 0) return;
    const int channel = std::countr_zero(free);
    Transfer* t = queue_[queue_head_++];
    if (queue_head_ == queue_.size()) {
      queue_.clear();
      queue_head_ = 0;
    }
    busy_ |= uint64_t{1} << channel;
    Begin(*t, channel);
  }
}

void DmaDispatcher::Begin(Transfer& t, int channel) {
  t.channel = channel;
  const ChipId destination = t.request.destination.buffer.chip;
  if (slice_.run().traced()) {  // the arguments cost more than the call: skip both untraced
    slice_.run().trace().Begin(chip_.tracks().dma_channels[channel], EventQueue::Now(),
                               t.request.label.str(),
                               {{"bytes", t.bytes},
                                {"to", slice_.torus().Describe(destination)},
                                {"hops", static_cast<int64_t>(t.hops)}},
                               t.flow);
  }
  if (slice_.run().traced()) BytesInFlight(static_cast<int64_t>(t.bytes));
  const Picoseconds now = EventQueue::Now();
  const Picoseconds issued = now + issue_latency_;
  if (t.bytes == 0) {
    // No chunk to carry the notice: it crosses the route as a semaphore signal does.
    const Picoseconds landed = destination == id_
                                   ? issued
                                   : slice_.SendRemoteSignal(id_, t.request.recv_semaphore, issued,
                                                             &t.request.label.str());
    Schedule(slice_, now, issued, kDeparted, t);
    Schedule(slice_, now, landed, kLanded, t);
    return;
  }
  if (issue_latency_ == 0) {
    ReserveChunk(slice_, t);
  } else {
    Schedule(slice_, now, issued, kReserve, t);
  }
}

void DmaDispatcher::RunChunkEvent(void* slice_state, uint64_t transfer, uint64_t event_and_bytes) {
  auto& slice = *static_cast<SliceState*>(slice_state);
  auto& t = *reinterpret_cast<Transfer*>(static_cast<uintptr_t>(transfer));
  const uint64_t bytes = event_and_bytes >> 2;
  // The calendar runs this in a SystemC method, outside every core's thread: a failure here
  // (a memory model that refuses a chunk, or grants no way to its bytes) must fail the run
  // as a kernel's does, not escape sc_start.
  try {
    switch (static_cast<ChunkEvent>(event_and_bytes & 3)) {
      case kDeparted:
        OnDeparted(slice, t, bytes);
        break;
      case kDepartedThenReserve:
        OnDeparted(slice, t, bytes);
        ReserveChunk(slice, t);
        break;
      case kReserve:
        ReserveChunk(slice, t);
        break;
      case kLanded:
        OnLanded(slice, t, bytes);
        break;
    }
  } catch (const Error& e) {
    slice.run().Fail(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    slice.run().Fail(ErrorKind::kCapacity,
                     "the simulator ran out of host memory while it moved the chunks of DMA '" +
                         t.request.label.str() +
                         "'. Run on fewer chips or a smaller size, or on a host with more "
                         "memory (docs/performance-at-scale.md says what pod-scale runs take).");
  }
}

namespace {
// A semaphore's value and wake amount, in one line (SemaphoreTable).
void PrefetchSemaphore(const Semaphore* s) {
  if (s != nullptr) __builtin_prefetch(s, 1);
}
// The fields a booking reads lie in a port's first three lines (BandwidthPort, LinkTiming).
void PrefetchPorts(const Transfer& t) {
  for (const PathHop& hop : t.path) {
    const auto port = reinterpret_cast<uintptr_t>(hop.direct);
    if (port == 0) continue;
    __builtin_prefetch(reinterpret_cast<const void*>(port), 1);
    __builtin_prefetch(reinterpret_cast<const void*>(port + 64), 1);
    __builtin_prefetch(reinterpret_cast<const void*>(port + 128), 1);
  }
}
}  // namespace

void DmaDispatcher::PrefetchTransfer(void*, uint64_t transfer, uint64_t event_and_bytes) {
  // `transfer` is a live Transfer: a chunk event is scheduled only while its DMA is in flight.
  const auto& t = *reinterpret_cast<const Transfer*>(static_cast<uintptr_t>(transfer));
  __builtin_prefetch(&t.sent);
  __builtin_prefetch(&t.recv_semaphore);
  const auto event = static_cast<ChunkEvent>(event_and_bytes & 3);
  if (event == kDepartedThenReserve || event == kReserve) {
    __builtin_prefetch(&t.path);
    __builtin_prefetch(&t.within_one_memory);  // after the inline hops
    __builtin_prefetch(&t.notify);
  }
}

void DmaDispatcher::PrefetchChunkEvent(void*, uint64_t transfer, uint64_t event_and_bytes) {
  const auto& t = *reinterpret_cast<const Transfer*>(static_cast<uintptr_t>(transfer));
  switch (static_cast<ChunkEvent>(event_and_bytes & 3)) {
    case kDeparted:
      PrefetchSemaphore(t.send_semaphore);
      break;
    case kDepartedThenReserve:
      PrefetchSemaphore(t.send_semaphore);
      PrefetchPorts(t);
      break;
    case kReserve:
      PrefetchPorts(t);
      break;
    case kLanded:
      PrefetchSemaphore(t.recv_semaphore);
      break;
  }
}

uint64_t DmaDispatcher::ChunkAddress(uint64_t base, const ByteBox& box, bool dense, uint64_t sent) {
  return base + (dense ? box.offset + sent : BoxOffsetAt(box, sent));
}

void DmaDispatcher::ReserveChunk(SliceState& slice, Transfer& t) {
  const uint64_t bytes = std::min(t.chunk_bytes, t.bytes - t.sent);
  ChunkSchedule schedule(EventQueue::Now(), slice.store_and_forward());
  // The read from the source memory, then the write along the route to the destination. A
  // copy within one memory books its port once, for both.
  const size_t hops = t.path.size();
  // Each hop's port is a cache miss on a large slice: ask for all of them at once, not one
  // after another as the bookings reach them.
  // A hop without a direct port (a user's TLM target) has none to ask for.
  for (size_t i = 0; i < hops; ++i) {
    const auto port = reinterpret_cast<uintptr_t>(t.path[i].direct);
    if (port == 0) continue;
    __builtin_prefetch(reinterpret_cast<const void*>(port));
    __builtin_prefetch(reinterpret_cast<const void*>(port + 64));
    __builtin_prefetch(reinterpret_cast<const void*>(port + 128));
  }
  // Untraced, the ports keep no label (their trace is off), so it is not even read.
  const std::string* label = slice.run().traced() ? &t.request.label.str() : nullptr;
  for (size_t i = 0; i < hops; ++i) {
    const PathHop& hop = t.path[i];
    const uint64_t length = i == 0 && t.within_one_memory ? 2 * bytes : bytes;
    if (hop.direct && !t.through_tlm) {
      hop.direct->BookChunk(schedule, length, t.id, label);
    } else {
      t.dispatcher->BookThroughTlm(t, i, i > 0 && i + 1 < hops, length, schedule);
    }
  }
  const Picoseconds departure = schedule.departure();
  const Picoseconds pace = schedule.pace();
  const bool more = t.sent + bytes < t.bytes;
  const Picoseconds now = schedule.now();
  Schedule(slice, now, departure, more && pace == departure ? kDepartedThenReserve : kDeparted, t,
           bytes);
  if (more && pace != departure) Schedule(slice, now, pace, kReserve, t);
  Schedule(slice, now, schedule.arrival() + t.notify, kLanded, t, bytes);
}

void DmaDispatcher::BookThroughTlm(Transfer& t, size_t hop, bool link, uint64_t bytes,
                                   ChunkSchedule& schedule) {
  tlm::tlm_generic_payload& payload = payloads_.Acquire();
  payload.set_command(tlm::TLM_IGNORE_COMMAND);
  auto& chunk = *payload.get_extension<ChunkExtension>();
  chunk.transfer = t.id;
  chunk.label = &t.request.label.str();
  chunk.schedule = schedule;
  chunk.route = nullptr;
  chunk.forward = false;  // this engine calls each hop of the path itself
  chunk.read_and_write = t.within_one_memory;
  payload.set_address(
      hop > 0
          ? ChunkAddress(t.destination_base, t.request.destination.box, t.destination_dense, t.sent)
          : ChunkAddress(t.source_base, t.request.source.box, t.source_dense, t.sent));
  payload.set_data_length(static_cast<unsigned int>(bytes));
  tlm::tlm_fw_transport_if<>& target = *t.path[hop].target;
  if (link) {
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    target.b_transport(payload, delay);
  } else {
    BookMemoryHop(target, payload, chunk);
  }
  schedule = chunk.schedule;
  const bool refused = payload.is_response_error();
  const std::string status = refused ? payload.get_response_string() : "";
  const uint64_t address = payload.get_address();
  payload.release();
  if (!refused) return;
  const ChipId chip = AddressChip(address);
  throw Error(ErrorKind::kInvalidArgument,
              "the " + std::string(MemorySpaceName(AddressSpace(address))) + " of " +
                  slice_.torus().Describe(chip) + " (timing model '" +
                  slice_.chip(chip).memory_at(AddressSlot(address)).timing_model() +
                  "') refused a chunk of DMA '" + t.request.label.str() + "' (" + status +
                  "); a memory model must accept TLM_IGNORE_COMMAND transactions.");
}

bool DmaDispatcher::ShareBlocksOf(Transfer& t, bool into) {
  const Region& region = into ? t.request.destination : t.request.source;
  if (!BoxIsDense(region.box)) return false;
  const uint64_t address = (into ? t.destination_base : t.source_base) + region.box.offset;
  return TransportBlocks(*engine_.socket.operator->(), address, t.bytes, t.shared, into);
}

void DmaDispatcher::MoveBytes(const Region& region, uint64_t base, uint8_t* data, bool into) {
  tlm::tlm_generic_payload payload;
  payload.set_address(base);
  payload.set_command(into ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  tlm::tlm_dmi dmi;
  if (engine_.socket->get_direct_mem_ptr(payload, dmi) &&
      (into ? dmi.is_write_allowed() : dmi.is_read_allowed()) && dmi.get_start_address() <= base &&
      dmi.get_end_address() >= base + region.box.end() - 1) {  // the grant covers the box
    uint8_t* bytes = dmi.get_dmi_ptr() + (base - dmi.get_start_address());
    if (into) {
      ScatterBox(bytes, region.box, data);
    } else {
      GatherBox(bytes, region.box, data);
    }
    return;
  }
  // No DMI: copy run by run through debug transport.
  ForEachRun(region.box, [&](uint64_t offset, uint64_t run) {
    payload.set_address(base + offset);
    payload.set_data_ptr(data);
    payload.set_data_length(static_cast<unsigned int>(run));
    if (engine_.socket->transport_dbg(payload) != run) {
      throw Error(ErrorKind::kInvalidArgument,
                  "the memory model behind " + slice_.torus().Describe(AddressChip(base)) + "'s " +
                      MemorySpaceName(AddressSpace(base)) +
                      " grants neither DMI nor debug transport, so a functional run cannot "
                      "move its bytes; forward both to the chip's Memory, or run timing-only.");
    }
    data += run;
  });
}

inline void DmaDispatcher::OnDeparted(SliceState& slice, Transfer& t, uint64_t bytes) {
  t.sent += bytes;
  if (t.send_semaphore) {
    if (t.sent == t.bytes) {  // only the last chunk is remembered, so only it builds a Touch
      const Touch touch{EventQueue::Now(), t.issuer, Touch::Kind::kDmaSent,
                        static_cast<int64_t>(t.bytes), t.request.label};
      slice.AddToSemaphore(*t.send_semaphore, t.request.send_semaphore, static_cast<int64_t>(bytes),
                           &touch);
    } else {
      slice.AddToSemaphore(*t.send_semaphore, t.request.send_semaphore, static_cast<int64_t>(bytes),
                           nullptr);
    }
  }
  if (t.sent == t.bytes) t.dispatcher->Departed(t);
}

void DmaDispatcher::Departed(Transfer& t) {
  if (AccessObserver* observer = slice_.observer())
    observer->DmaSent(t.observed_id,
                      t.request.has_send_semaphore ? &t.request.send_semaphore : nullptr);
  // The payload leaves with its last chunk; the sender may reuse the source after wait_send.
  if (slice_.run().functional()) {
    if (t.bytes > 0 && !ShareBlocksOf(t, false)) {
      t.staging = std::make_unique_for_overwrite<uint8_t[]>(t.bytes);
      MoveBytes(t.request.source, t.source_base, t.staging.get(), false);
    }
  }
  if (slice_.run().traced())
    slice_.run().trace().End(chip_.tracks().dma_channels[t.channel], EventQueue::Now());
  busy_ &= ~(uint64_t{1} << t.channel);
  Admit();
}

inline void DmaDispatcher::OnLanded(SliceState& slice, Transfer& t, uint64_t bytes) {
  t.landed += bytes;
  // Bytes in flight only feed the trace's counter.
  if (slice.run().traced()) t.dispatcher->BytesInFlight(-static_cast<int64_t>(bytes));
  if (t.landed == t.bytes) return t.dispatcher->Landed(t, bytes);
  if (bytes > 0)
    slice.AddToSemaphore(*t.recv_semaphore, t.request.recv_semaphore, static_cast<int64_t>(bytes),
                         nullptr);
}

void DmaDispatcher::Landed(Transfer& t, uint64_t bytes) {
  ledger_.Landed(t);
  if (slice_.run().functional()) {
    if (!t.shared.empty() && !ShareBlocksOf(t, true)) {
      t.staging = std::make_unique_for_overwrite<uint8_t[]>(t.bytes);
      CopyOutBlocks(t.shared, t.bytes, t.staging.get());
    }
    if (t.bytes > 0 && t.staging)
      MoveBytes(t.request.destination, t.destination_base, t.staging.get(), true);
    t.staging.reset();
    t.shared.clear();
  }
  const ChipId destination = t.request.destination.buffer.chip;
  if (slice_.run().traced()) {
    slice_.run().trace().Instant(slice_.chip(destination).tracks().dma_arrivals, EventQueue::Now(),
                                 "arrived: " + t.request.label.str(),
                                 {{"bytes", t.bytes}, {"from", slice_.torus().Describe(t.issuer)}},
                                 0, t.flow);
  }
  if (AccessObserver* observer = slice_.observer())
    observer->DmaLanded(t.observed_id, t.request.recv_semaphore);
  // Only the last chunk is remembered, so only it builds a Touch.
  const Touch touch{EventQueue::Now(), t.issuer, Touch::Kind::kDmaLanded,
                    static_cast<int64_t>(t.bytes), t.request.label};
  slice_.AddToSemaphore(*t.recv_semaphore, t.request.recv_semaphore, static_cast<int64_t>(bytes),
                        &touch);
  ledger_.Trim();  // may free `t`
}

void DmaDispatcher::BytesInFlight(int64_t delta) {
  bytes_in_flight_ += delta;
  slice_.run().trace().Counter(chip_.tracks().bytes_in_flight, EventQueue::Now(),
                               static_cast<double>(bytes_in_flight_));
}

}  // namespace tpusim::sim
