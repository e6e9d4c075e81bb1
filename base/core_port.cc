#include "base/core_port.h"

#include <cstring>

namespace tpusim::base {

void Uninitialized::Fill(uint64_t offset, uint64_t size, uint8_t* out) const {
  if (pattern == 0 || element_bytes == 0) {
    std::memset(out, 0, size);
    return;
  }
  for (uint64_t i = 0; i < size; ++i)
    out[i] = static_cast<uint8_t>(pattern >> (8 * ((offset + i) % element_bytes)));
}

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
