#pragma once

// Bookkeeping both trace writers share: which tracks exist, what kind each is, and where
// it sits in the hierarchy. Catches calls that name a track that was never added, or use
// a counter track for slices (and the reverse), at the call that makes the mistake
// rather than in a trace viewer much later.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/trace_sink.h"

namespace tpusim::traces::internal {

enum class TrackKind { kProcess, kSlice, kCounter };

struct TrackInfo {
  TrackId id = 0;
  TrackId parent = 0;   // 0 for process tracks
  TrackId process = 0;  // the top-level ancestor; the track itself for process tracks
  TrackKind kind = TrackKind::kProcess;
  std::string name;
  std::string path;  // names from the top-level track down, joined by "/"
  int rank = 0;
  CounterUnit unit = CounterUnit::kCount;  // meaningful for counter tracks only
};

class TrackTable {
 public:
  // Ids are handed out 1, 2, 3... in call order, so the same calls give the same ids.
  const TrackInfo& AddProcess(std::string_view name, int rank);
  // Throws TraceError when `parent` was never added or is a counter track.
  const TrackInfo& AddChild(TrackId parent, std::string_view name, TrackKind kind, int rank,
                            CounterUnit unit = CounterUnit::kCount);

  // Each throws TraceError naming `operation` when `id` is unknown or of the wrong kind.
  const TrackInfo& SliceTrack(TrackId id, std::string_view operation) const;
  const TrackInfo& CounterTrack(TrackId id, std::string_view operation) const;

  const TrackInfo& Get(TrackId id) const { return tracks_[id - 1]; }

 private:
  const TrackInfo& Known(TrackId id, std::string_view operation) const;

  std::vector<TrackInfo> tracks_;  // tracks_[id - 1]
};

}  // namespace tpusim::traces::internal
