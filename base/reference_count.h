#pragma once

// The count of a block that handles share (base::Label's source, dsl::Ref's view block),
// kept as std::shared_ptr keeps its count in libstdc++: plain adds while the process has one
// host thread (a simulation runs on one), locked ones once it has more. Both handles are
// copied and dropped several times for every DMA a kernel issues, so a locked add each time
// was a cost a single-threaded run paid for nothing.

#include <atomic>
#include <cstdint>

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>  // glibc's __libc_single_threaded
#define TPUSIM_HAVE_SINGLE_THREADED 1
#endif

namespace tpusim::base {

inline bool SingleThreadedProcess() {
#if TPUSIM_HAVE_SINGLE_THREADED
  return __libc_single_threaded != 0;
#else
  return false;
#endif
}

inline void AddReference(std::atomic<uint32_t>& count) noexcept {
  if (SingleThreadedProcess())
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  else
    count.fetch_add(1, std::memory_order_relaxed);
}

// True when this was the last reference: the caller frees the block.
[[nodiscard]] inline bool DropReference(std::atomic<uint32_t>& count) noexcept {
  uint32_t was = 0;
  if (SingleThreadedProcess()) {
    was = count.load(std::memory_order_relaxed);
    count.store(was - 1, std::memory_order_relaxed);
  } else {
    was = count.fetch_sub(1, std::memory_order_acq_rel);
  }
  return was == 1;
}

}  // namespace tpusim::base
