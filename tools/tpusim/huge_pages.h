#pragma once

// Whether a run's heap may use 2 MiB pages, decided once its slice is known.
//
// jemalloc asks for huge pages for its whole heap (base/jemalloc_conf.cc). They pay on a large
// slice, where the state every chunk touches spans hundreds of MB and 4 KiB pages miss the
// TLB. On a small one they cost: the kernel clears each 2 MiB page whole at its first touch,
// though a 16-chip run uses a fraction of each (docs/performance-start-up.md, "Third
// pass: huge pages only for large slices"). So the tpusim executable starts with them off
// (defer_huge_pages.cc) and turns them on here for a slice of kHugePageDevices devices or more.

#include <cstdint>

namespace tpusim::cli {

// From this many devices on, huge pages save more than their clearing costs (measured on a
// v4 all-gather along one axis: even at 1024 devices, 8% less CPU at 4096).
inline constexpr uint64_t kHugePageDevices = 1024;

// True once the executable has turned huge pages off at start-up and not yet back on.
extern bool huge_pages_deferred;

// Turns huge pages back on for a slice of `devices` devices, if it is large enough and they
// were turned off at start-up. Memory already in use keeps its pages; what the slice
// allocates next gets huge ones.
void UseHugePagesFor(uint64_t devices);

}  // namespace tpusim::cli
