#pragma once

// A chip's TensorCore (`slice.chip_1_3.core`): the thread that runs the kernel or program on
// this chip, the threads of control it spawns (async collectives), and the MXU
// and VPU they share. Compute costs cycles of the chip's clock; a unit another thread of the
// chip holds is waited for.

#include <array>
#include <cstddef>
#include <memory>
#include <systemc>
#include <utility>
#include <vector>

#include "base/engine.h"
#include "sim/base_names.h"
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

  TensorCore(sc_core::sc_module_name name, SliceState& slice, Chip& chip,
             const config::ChipConfig& config, traces::TrackId track);

  Chip& chip() { return chip_; }
  double clock_hz() const { return config_.clock_hz(); }
  CoreThread& thread() { return thread_; }
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
  std::unique_ptr<ComputeModel> compute_model_;
  CoreThread& thread_;  // in the slice's hot arena
  std::array<Picoseconds, 2> unit_free_{0, 0};
  std::vector<std::pair<traces::TrackId, bool>> activity_tracks_;  // busy?
};

}  // namespace tpusim::sim
