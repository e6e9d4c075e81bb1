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
  if (recent_.empty() && value_ != 0) {
    // Only a DMA's last chunk is remembered, so a value with no history came from chunks
    // of DMAs still landing.
    return "it holds " + std::to_string(value_) +
           " from the first chunks of DMAs still landing into it; no DMA into it has finished "
           "and nothing has signalled it yet";
  }
  if (recent_.empty()) return "nothing has signalled it or sent data to it yet";
  std::string text = "last changed by";
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {
    text += (it == recent_.rbegin() ? " " : "; ") + it->Describe() + " from " +
            grid.Describe(it->from) + " (+" + std::to_string(it->amount) + " at " +
            FormatTime(it->when) + ")";
  }
  return text;
}

}  // namespace tpusim::sim
