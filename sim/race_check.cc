#include "sim/race_check.h"

namespace tpusim::sim {

uint32_t RaceCheck::SignalSent(ChipId chip, uint32_t core) {
  const uint32_t id = next_signal_++;
  in_flight_.emplace(id, races_.Release(races_.Agent(chip, core)));
  return id;
}

void RaceCheck::SignalArrived(uint32_t signal, SemaphoreHandle target) {
  auto it = in_flight_.find(signal);
  races_.SignalArrived(target, it->second);
  in_flight_.erase(it);
}

}  // namespace tpusim::sim
