#pragma once

// A chip's TensorCore (`slice.chip_1_3.core`; a megacore chip's second one is `core_1`): the
// thread that runs the kernel or program on this chip (core 0's), the threads of control
// spawned on it (async collectives, a megacore pallas_call's share of the grid), and the MXU
// and VPU they share. Compute costs cycles of the chip's clock; a unit another thread of the
// core holds is waited for.

#include <array>
#include <cstddef>
#include <memory>
#include <systemc>
#include <utility>
#include <vector>

#include "base/engine.h"
#include "sim/base_names.h"
#include "sim/chip.h"
#include "sim/compute_models.h"
#include "sim/core_thread.h"
#include "sim/parameters.h"
#include "topologies/topology.pb.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class Chip;
class SliceState;

class TensorCore : public sc_core::sc_module, public Described {
 public:
  static constexpr size_t kThreadStackBytes = 512 * 1024;  // kernels call host numerics on it

  // Core 0 runs the chip's program on a thread of its own; the other cores run what core 0
  // spawns on them (CoreThread::SpawnOnCore).
  TensorCore(sc_core::sc_module_name name, SliceState& slice, Chip& chip,
             const config::ChipConfig& config, const CoreTracks& tracks, uint32_t index);

  Chip& chip() { return chip_; }
  uint32_t index() const { return index_; }
  const CoreTracks& tracks() const { return tracks_; }
  double clock_hz() const { return config_.clock_hz(); }
  CoreThread& thread() { return *thread_; }
  // Whether a thread of control shows on the core's own track now (a spawned share of a
  // grid takes it when it is free, an async track otherwise).
  bool track_taken() const { return track_taken_; }
  void set_track_taken(bool taken) { track_taken_ = taken; }
  // Starts the core's thread, which runs `program` when the simulation starts. Call before
  // sc_start; the program must outlive the run.
  void Start(const Engine::CoreProgram& program);

  // The chip's compute model (chip.cost.model): what its threads' work takes.
  const ComputeModel& compute_model() const { return *compute_model_; }
  // When the MXU (or VPU) is free again, shared by the core's threads.
  Picoseconds& unit_free(ComputeUnit unit) { return unit_free_[unit == ComputeUnit::kMxu ? 0 : 1]; }

  // An async track of this chip for a spawned activity ("async 0", ...): a free one, or a
  // new one ranked after the chip's fixed tracks. Returns its slot and track.
  std::pair<size_t, traces::TrackId> TakeActivityTrack(int rank_base);
  void ReleaseActivityTrack(size_t slot) { activity_tracks_[slot].second = false; }

  std::vector<Parameter> parameters() const override;

 private:
  SliceState& slice_;
  Chip& chip_;
  const config::ChipConfig& config_;
  uint32_t index_;
  CoreTracks tracks_;
  std::unique_ptr<ComputeModel> compute_model_;
  CoreThread* thread_ = nullptr;  // in the slice's hot arena; core 0's only
  bool track_taken_ = false;
  std::array<Picoseconds, 2> unit_free_{0, 0};
  std::vector<std::pair<traces::TrackId, bool>> activity_tracks_;  // busy?
};

}  // namespace tpusim::sim
