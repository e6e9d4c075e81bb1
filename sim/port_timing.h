#pragma once

// The timing state of a memory's port and of one direction of a link: the calendar every
// DMA chunk through it books. It is what the simulator touches for each chunk, so the slice
// keeps all of it together (SliceState), apart from the module objects, which SystemC makes
// large: a 4096-chip slice's chunks then walk a few megabytes, not a few hundred. The
// Memory and IciLink modules book through these, from b_transport or, when a DMA engine
// knows a chunk's path, directly (ChunkTarget).

#include <cstdint>
#include <string>

#include "sim/bandwidth_port.h"
#include "sim/base_names.h"
#include "sim/chunk.h"

namespace tpusim::sim {

class MemoryPortTiming final : public ChunkTarget {
 public:
  MemoryPortTiming(std::string name, double bytes_per_second, traces::TraceSink* trace,
                   traces::TrackId track)
      : port(std::move(name), bytes_per_second, trace, track) {}

  // ChunkSchedule's memory-hop rule, then the port.
  void BookChunk(ChunkSchedule& schedule, uint64_t bytes, uint64_t transfer,
                 const std::string* label) override {
    const Picoseconds earliest = schedule.Enter(/*link=*/false, 0);
    const Picoseconds duration = port.Duration(bytes);
    const Picoseconds start =
        port.ReserveFor(schedule.now(), earliest, duration, bytes, transfer, label);
    schedule.Record(/*link=*/false, start, start + duration, 0);
  }

  BandwidthPort port;
};

class LinkTiming final : public ChunkTarget {
 public:
  LinkTiming(std::string name, double bytes_per_second, Picoseconds latency,
             traces::TraceSink* trace, traces::TrackId track)
      : latency(latency), port(std::move(name), bytes_per_second, trace, track) {}

  // ChunkSchedule's link rule, then the link.
  void BookChunk(ChunkSchedule& schedule, uint64_t bytes, uint64_t transfer,
                 const std::string* label) override {
    const Picoseconds duration = port.Duration(bytes);
    const Picoseconds earliest = schedule.Enter(/*link=*/true, duration);
    const Picoseconds start =
        port.ReserveFor(schedule.now(), earliest, duration, bytes, transfer, label);
    schedule.Record(/*link=*/true, start, start + duration, latency);
  }
  // ChunkSchedule's link rule too, but the signal's packet goes as soon as it may: on the
  // wire a packet interleaves with the packets of the chunks booked here, whose bytes the
  // model books whole (a 512 KiB chunk holds a link for ~12 us, a 64-byte signal for ~1.4 ns).
  // The port counts and traces it without holding itself for it (BandwidthPort::Pass).
  void BookSignal(ChunkSchedule& schedule, uint64_t bytes, const std::string* label) override {
    const Picoseconds duration = TransferTime(bytes, port.bytes_per_second());
    const Picoseconds start = schedule.Enter(/*link=*/true, duration);
    port.Pass(start, label);
    schedule.Record(/*link=*/true, start, start + duration, latency);
  }

  Picoseconds latency;  // before the port, in the cache line a chunk reads first
  BandwidthPort port;
};

// A target module whose chunks book through a ChunkTarget: a DMA engine that knows a chunk's
// path books it there without a transaction (Router::PathTo).
class TimedTarget {
 public:
  virtual ChunkTarget& chunk_timing() = 0;

 protected:
  ~TimedTarget() = default;
};

}  // namespace tpusim::sim
