#include "traces/track_table.h"

#include <utility>

namespace tpusim::traces::internal {

const TrackInfo& TrackTable::AddProcess(std::string_view name, int rank) {
  TrackInfo info;
  info.id = tracks_.size() + 1;
  info.process = info.id;
  info.kind = TrackKind::kProcess;
  info.name = std::string(name);
  info.path = info.name;
  info.rank = rank;
  tracks_.push_back(std::move(info));
  return tracks_.back();
}

const TrackInfo& TrackTable::AddChild(TrackId parent, std::string_view name, TrackKind kind,
                                      int rank, CounterUnit unit) {
  const std::string operation =
      std::string(kind == TrackKind::kCounter ? "AddCounterTrack" : "AddTrack") + " \"" +
      std::string(name) + "\"";
  const TrackInfo& parent_info = Known(parent, operation);
  if (parent_info.kind == TrackKind::kCounter) {
    throw TraceError(operation + " names the counter track \"" + parent_info.path +
                     "\" as its parent; counter tracks cannot have children, so nest it under "
                     "a process or slice track");
  }
  TrackInfo info;
  info.id = tracks_.size() + 1;
  info.parent = parent;
  info.process = parent_info.process;
  info.kind = kind;
  info.name = std::string(name);
  info.path = parent_info.path + "/" + info.name;
  info.rank = rank;
  info.unit = unit;
  tracks_.push_back(std::move(info));
  return tracks_.back();
}

const TrackInfo& TrackTable::Known(TrackId id, std::string_view operation) const {
  if (id == 0 || id > tracks_.size()) {
    throw TraceError(std::string(operation) + " names track id " + std::to_string(id) +
                     ", which was never added; use an id returned by AddProcessTrack, "
                     "AddTrack or AddCounterTrack of the same sink");
  }
  return tracks_[id - 1];
}

const TrackInfo& TrackTable::SliceTrack(TrackId id, std::string_view operation) const {
  const TrackInfo& info = Known(id, operation);
  if (info.kind == TrackKind::kCounter) {
    throw TraceError(std::string(operation) + " on the counter track \"" + info.path +
                     "\"; slices and instants need a track made by AddProcessTrack or AddTrack");
  }
  return info;
}

const TrackInfo& TrackTable::CounterTrack(TrackId id, std::string_view operation) const {
  const TrackInfo& info = Known(id, operation);
  if (info.kind != TrackKind::kCounter) {
    throw TraceError(std::string(operation) + " on the track \"" + info.path +
                     "\", which is not a counter track; make one with AddCounterTrack");
  }
  return info;
}

}  // namespace tpusim::traces::internal
