#pragma once

// The HBM traffic of a piece of work the core does itself (an XLA op's reads and writes,
// sim/compute_models.h): booked on a memory's port a chunk at a time, each when the one before
// it ends, so the chunks of DMAs in flight interleave with it and both see a share of the
// port. A chunk holds the port for bytes / rate, the rate the work reaches. Nothing ticks: one
// calendar event per chunk, and `done` runs from the calendar when the last chunk ends.

#include <cstdint>
#include <functional>
#include <string>

#include "sim/bandwidth_port.h"
#include "sim/base_names.h"
#include "sim/event_queue.h"

namespace tpusim::sim {

class MemoryStream {
 public:
  // `id` tells the port's trace this stream's chunks from other transfers'; `label` names
  // them there and must outlive the run.
  MemoryStream(EventQueue& calendar, BandwidthPort& port, uint64_t bytes, double bytes_per_second,
               uint64_t chunk_bytes, uint64_t id, const std::string* label,
               std::function<void()> done);
  MemoryStream(const MemoryStream&) = delete;
  MemoryStream& operator=(const MemoryStream&) = delete;

  // Books the first chunk now.
  void Start();
  bool finished() const { return finished_; }

 private:
  static void ChunkEnded(void* stream, uint64_t, uint64_t);
  void Book();

  EventQueue& calendar_;
  BandwidthPort& port_;
  uint64_t bytes_;
  double bytes_per_second_;
  uint64_t chunk_bytes_;
  uint64_t id_;
  const std::string* label_;
  std::function<void()> done_;
  uint64_t booked_ = 0;
  bool finished_ = false;
};

}  // namespace tpusim::sim
