#include "base/core_port.h"

#include <algorithm>
#include <cstring>

namespace tpusim::base {

void Uninitialized::Fill(uint64_t offset, uint64_t size, uint8_t* out) const {
  if (pattern == 0 || element_bytes == 0) {
    std::memset(out, 0, size);
    return;
  }
  // One period byte by byte, then doubling copies: a functional run fills every output
  // buffer it materialises, gigabytes at pod scale.
  const uint64_t head = std::min<uint64_t>(size, element_bytes);
  for (uint64_t i = 0; i < head; ++i)
    out[i] = static_cast<uint8_t>(pattern >> (8 * ((offset + i) % element_bytes)));
  for (uint64_t done = head; done < size;) {
    const uint64_t copy = std::min(done, size - done);
    std::memcpy(out + done, out, copy);
    done += copy;
  }
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
