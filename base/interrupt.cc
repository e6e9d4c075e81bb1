#include "base/interrupt.h"

namespace tpusim::base {

namespace {
std::atomic<const std::atomic<bool>*> interrupt_flag{nullptr};
}  // namespace

void SetInterruptFlag(const std::atomic<bool>* flag) {
  interrupt_flag.store(flag);
}

bool InterruptRequested() {
  const std::atomic<bool>* flag = interrupt_flag.load(std::memory_order_relaxed);
  return flag && flag->load(std::memory_order_relaxed);
}

}  // namespace tpusim::base
