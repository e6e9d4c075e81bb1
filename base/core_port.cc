#include "base/core_port.h"

namespace tpusim::base {

const char* MemorySpaceName(MemorySpace space) {
  switch (space) {
    case MemorySpace::kHbm:
      return "HBM";
    case MemorySpace::kVmem:
      return "VMEM";
    case MemorySpace::kSmem:
      return "SMEM";
  }
  return "memory";
}

const char* SemaphoreKindName(SemaphoreKind kind) {
  switch (kind) {
    case SemaphoreKind::kDma:
      return "DMA";
    case SemaphoreKind::kRegular:
      return "REGULAR";
    case SemaphoreKind::kBarrier:
      return "BARRIER";
  }
  return "semaphore";
}

const char* WaitKindName(WaitKind kind) {
  switch (kind) {
    case WaitKind::kDmaSend:
      return "wait_send";
    case WaitKind::kDmaRecv:
      return "wait_recv";
    case WaitKind::kDma:
      return "wait";
    case WaitKind::kSemaphore:
      return "semaphore_wait";
  }
  return "wait";
}

}  // namespace tpusim::base
