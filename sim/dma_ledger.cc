#include "sim/dma_ledger.h"

#include <algorithm>

#include "sim/byte_box.h"
#include "sim/chip.h"
#include "sim/chunk.h"
#include "sim/memory.h"
#include "sim/slice_state.h"

namespace tpusim::sim {

Transfer& DmaLedger::Add() {
  std::unique_ptr<Transfer> t;
  if (spare_.empty()) {
    t = std::make_unique<Transfer>();
  } else {
    // A fresh Transfer in every field, holding the old one's storage: Start assigns the
    // request and appends the path into it.
    t = std::move(spare_.back());
    spare_.pop_back();
    t->Reuse();
  }
  t->id = ++started_;
  return *transfers_.emplace_back(std::move(t));
}

namespace {

// Where `key` is first looked for in a table of mask + 1 slots (a power of two): keys of
// neighbouring chips' buffers differ in high bits, which a multiplication spreads over the
// index.
size_t HomeOf(uint64_t key, size_t mask) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

}  // namespace

BufferWriters& DmaLedger::WritersOf(uint64_t key) {
  if (2 * (used_ + 1) > slots_.size()) {
    std::vector<Slot> old(std::max<size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (!s.writers) continue;
      size_t i = HomeOf(s.key, mask);
      while (slots_[i].writers)
        i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  const size_t mask = slots_.size() - 1;
  size_t i = HomeOf(key, mask);
  for (; slots_[i].writers; i = (i + 1) & mask)
    if (slots_[i].key == key) return *slots_[i].writers;
  ++used_;
  slots_[i] = {key, &writers_.emplace_back()};
  return *slots_[i].writers;
}

void DmaLedger::CheckWriteRace(Transfer& t, const SliceState& slice) {
  if (t.bytes == 0) return;
  const uint64_t key = BufferKey(t.request.destination.buffer);
  if (key != last_buffer_ || !last_writers_) {
    last_writers_ = &WritersOf(key);
    last_buffer_ = key;
  }
  BufferWriters& writers = *last_writers_;
  const ByteBox& box = t.request.destination.box;
  const BoxFootprint footprint = writers.Footprint(box, t.destination_dense);
  const BufferWriters::Entry* first = nullptr;  // the earliest-started overlapping writer
  writers.ForEachCandidate(footprint.start, footprint.end, [&](const BufferWriters::Entry& e) {
    if (first && first->id < e.id) return;
    int overlap =
        FootprintsOverlap(e.box, footprint, true, writers.element_bytes(), writers.dims());
    // Footprints that cannot tell (boxes off the writers' lattice) ask the boxes.
    if (overlap < 0) overlap = BoxesOverlap(e.writer->request.destination.box, box);
    if (overlap > 0) first = &e;
  });
  if (first) {
    const auto& b = t.request.destination.buffer;
    const Torus& torus = slice.torus();
    throw Error(ErrorKind::kRace,
                "race: DMA '" + t.request.label.str() + "' from " + torus.Describe(t.issuer) +
                    " writes bytes of '" +
                    slice.chip(b.chip).memory(b.space, b.core).Label(b.index) + "' on " +
                    torus.Describe(b.chip) + " that DMA '" + first->writer->request.label.str() +
                    "' from " + torus.Describe(first->writer->issuer) +
                    " is still writing. Wait for the first copy to land (its receive "
                    "semaphore) before starting the second, or give each in-flight copy its own "
                    "buffer (N-buffering with capacity semaphores).");
  }
  t.writers = &writers;
  writers.Insert(footprint, t.id, &t);
}

void DmaLedger::Landed(Transfer& t) {
  t.landed_all = true;
  if (!t.writers) return;  // nothing to write (bytes == 0), so never a writer
  t.writers->Remove(t.request.destination.box.offset, t.id);
  t.writers = nullptr;
}

void DmaLedger::Trim() {
  if (keep_settled_) return;
  while (!transfers_.empty() && Settled(*transfers_.front())) {
    spare_.push_back(std::move(transfers_.front()));
    transfers_.pop_front();
    if (settled_ > 0) --settled_;
  }
}

void DmaLedger::CheckFree(BufferHandle buffer, const std::string& what, const std::string& label) {
  while (settled_ < transfers_.size() && Settled(*transfers_[settled_]))
    ++settled_;
  for (size_t i = settled_; i < transfers_.size(); ++i) {
    const Transfer& t = *transfers_[i];
    const bool reading = t.sent < t.bytes && t.request.source.buffer == buffer;
    const bool writing = t.landed < t.bytes && t.request.destination.buffer == buffer;
    if (!reading && !writing) continue;
    throw Error(ErrorKind::kRace, what + " '" + label + "' while DMA '" + t.request.label.str() +
                                      "' still " + (writing ? "writes into" : "reads from") +
                                      " it. Wait for the DMA before the scope that allocated "
                                      "the buffer ends.");
  }
}

PayloadPool::~PayloadPool() {
  for (tlm::tlm_generic_payload* payload : all_)
    delete payload;  // and its ChunkExtension: a payload frees the extensions it holds
}

tlm::tlm_generic_payload& PayloadPool::Acquire() {
  if (free_.empty()) {
    auto* payload = new tlm::tlm_generic_payload(this);
    payload->set_extension(new ChunkExtension);
    all_.push_back(payload);
    free_.push_back(payload);
  }
  tlm::tlm_generic_payload* payload = free_.back();
  free_.pop_back();
  payload->acquire();
  return *payload;
}

void PayloadPool::free(tlm::tlm_generic_payload* payload) {
  free_.push_back(payload);
}

}  // namespace tpusim::sim
