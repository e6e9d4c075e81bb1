#include "sim/semaphore.h"

namespace tpusim::sim {

std::string Touch::Describe() const {
  switch (kind) {
    case Kind::kSignal:
      return "signal";
    case Kind::kDmaSent:
      return "DMA '" + dma.str() + "' (sent)";
    case Kind::kDmaLanded:
      break;
  }
  return "DMA '" + dma.str() + "'";
}

std::string Semaphore::DescribeRecent(const DeviceGrid& grid) const {
  if (recent_count_ == 0 && value_ != 0) {
    // Only a DMA's last chunk is remembered, so a value with no history came from chunks
    // of DMAs still landing.
    return "it holds " + std::to_string(value_) +
           " from the first chunks of DMAs still landing into it; no DMA into it has finished "
           "and nothing has signalled it yet";
  }
  if (recent_count_ == 0) return "nothing has signalled it or sent data to it yet";
  std::string text = "last changed by";
  for (size_t i = 0; i < recent_count_; ++i) {
    const Touch t = recent(i);
    text += (i == 0 ? " " : "; ") + t.Describe() + " from " + grid.Describe(t.from) + " (+" +
            std::to_string(t.amount) + " at " + FormatTime(t.when) + ")";
  }
  return text;
}

}  // namespace tpusim::sim
