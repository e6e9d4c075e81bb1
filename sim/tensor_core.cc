// The core's thread is spawned, which needs SystemC's dynamic processes.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sim/tensor_core.h"

#include <algorithm>

#include "sim/chip.h"
#include "sim/slice_state.h"

namespace tpusim::sim {

TensorCore::TensorCore(sc_core::sc_module_name name, SliceState& slice, Chip& chip,
                       const config::ChipConfig& config, const CoreTracks& tracks, uint32_t index)
    : sc_module(name),
      slice_(slice),
      chip_(chip),
      config_(config),
      index_(index),
      tracks_(tracks),
      compute_model_(ComputeModels::Build(config, slice.torus().Describe(chip.id()))) {
  if (index > 0) return;
  thread_ = &slice.hot().Make<CoreThread>(slice, *this, tracks.core);
  track_taken_ = true;
  slice.waiters(chip.id()).push_back(thread_);
  slice.cores().push_back(thread_);
}

// Spawned while the simulation runs (Slice::Run's method at time 0), not declared with
// SC_THREAD nor spawned before sc_start: SystemC keeps those in its process table and frees
// each by searching what remains of it, quadratic in the chips (12% of the samples of a short
// run on the TPU7x pod). Spawned in the run, a thread is freed with its last handle.
void TensorCore::Start(const Engine::CoreProgram& program) {
  sc_core::sc_spawn_options options;
  options.set_stack_size(kThreadStackBytes);
  CoreThread* thread = thread_;
  sc_core::sc_spawn([thread, &program] { thread->Body(program); },
                    ("core_" + std::to_string(chip_.id())).c_str(), &options);
}

std::pair<size_t, traces::TrackId> TensorCore::TakeActivityTrack(int rank_base) {
  auto free = std::find_if(activity_tracks_.begin(), activity_tracks_.end(),
                           [](const auto& t) { return !t.second; });
  if (free == activity_tracks_.end()) {
    const int n = static_cast<int>(activity_tracks_.size());
    activity_tracks_.emplace_back(
        slice_.run().trace().AddTrack(chip_.tracks().chip, "async " + std::to_string(n),
                                      rank_base + n),
        false);
    free = activity_tracks_.end() - 1;
  }
  free->second = true;
  return {static_cast<size_t>(free - activity_tracks_.begin()), free->first};
}

std::vector<Parameter> TensorCore::parameters() const {
  std::vector<Parameter> all = {
      {"clock", FormatHertz(config_.clock_hz())},
      {"MXUs", FormatCount(config_.mxu_count()) + " x " + std::to_string(config_.mxu_size()) + "x" +
                   std::to_string(config_.mxu_size())},
      {"VPU", std::to_string(config_.vpu_sublanes()) + " x " + std::to_string(config_.vpu_lanes())},
      {"compute", config_.cost().has_model() ? config_.cost().model() : "roofline"}};
  for (Parameter& p : compute_model_->parameters())
    all.push_back(std::move(p));
  return all;
}

}  // namespace tpusim::sim
