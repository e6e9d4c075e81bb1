#pragma once

// The race checker as an observer of the model's accesses (sim/access_observer.h): it
// passes each report to a RaceDetector (sim/race_detector.h), naming cores by the
// detector's agent numbers and keeping each signal's clock from its leaving to its
// arriving. The slice attaches one to functional runs with race_check on.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/access_observer.h"
#include "sim/race_detector.h"

namespace tpusim::sim {

class RaceCheck final : public AccessObserver {
 public:
  // `cores`: each chip's TensorCore count; `reporter` is called with a race and throws.
  RaceCheck(const std::vector<uint32_t>& cores, RaceDetector::Reporter reporter)
      : races_(cores, std::move(reporter)) {}

  void BeginScope(ChipId chip, uint32_t core, std::string_view name) override {
    races_.BeginScope(races_.Agent(chip, core), name);
  }
  void EndScope(ChipId chip, uint32_t core) override { races_.EndScope(races_.Agent(chip, core)); }
  void CoreAccess(ChipId chip, uint32_t core, const Region& region, bool write,
                  std::string_view what, Picoseconds now) override {
    races_.CoreAccess(races_.Agent(chip, core), region, write, what, now);
  }
  uint32_t DmaStarted(ChipId chip, uint32_t core, const DmaRequest& request,
                      Picoseconds now) override {
    return races_.StartDma(races_.Agent(chip, core), request, now);
  }
  void DmaSent(uint32_t dma, const SemaphoreHandle* send) override { races_.DmaSent(dma, send); }
  void DmaLanded(uint32_t dma, SemaphoreHandle recv) override { races_.DmaLanded(dma, recv); }
  uint32_t SignalSent(ChipId chip, uint32_t core) override;
  void SignalArrived(uint32_t signal, SemaphoreHandle target) override;
  void Acquired(ChipId chip, uint32_t core, SemaphoreHandle semaphore) override {
    races_.Acquire(races_.Agent(chip, core), semaphore);
  }
  void Freed(BufferHandle buffer) override { races_.Free(buffer); }

  const RaceDetector& detector() const { return races_; }

 private:
  RaceDetector races_;
  // The clocks of signals on their way, by the id SignalSent gave them.
  std::unordered_map<uint32_t, std::vector<uint32_t>> in_flight_;
  uint32_t next_signal_ = 0;
};

}  // namespace tpusim::sim
