#include "sim/memory_stream.h"

#include <algorithm>

namespace tpusim::sim {

MemoryStream::MemoryStream(EventQueue& calendar, BandwidthPort& port, uint64_t bytes,
                           double bytes_per_second, uint64_t chunk_bytes, uint64_t id,
                           const std::string* label, std::function<void()> done)
    : calendar_(calendar),
      port_(port),
      bytes_(bytes),
      bytes_per_second_(bytes_per_second),
      chunk_bytes_(chunk_bytes),
      id_(id),
      label_(label),
      done_(std::move(done)) {}

void MemoryStream::Start() {
  Book();
}

void MemoryStream::Book() {
  const Picoseconds now = EventQueue::Now();
  const uint64_t bytes = std::min(chunk_bytes_, bytes_ - booked_);
  const Picoseconds duration = TransferTime(bytes, bytes_per_second_);
  const Picoseconds start = port_.ReserveFor(now, now, duration, bytes, id_, label_);
  booked_ += bytes;
  calendar_.At(start + duration, &MemoryStream::ChunkEnded, this);
}

void MemoryStream::ChunkEnded(void* stream, uint64_t, uint64_t) {
  auto& s = *static_cast<MemoryStream*>(stream);
  if (s.booked_ < s.bytes_) return s.Book();
  s.finished_ = true;
  s.done_();
}

}  // namespace tpusim::sim
