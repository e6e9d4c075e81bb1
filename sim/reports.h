#pragma once

// What a failed run tells its user: who waits on what (a wait-for graph), spins nothing can
// end, runs past the time limit, and semaphores left non-zero. Each is whole sentences in
// the kernel author's terms that end with how to fix it.

#include <string>

#include "sim/base_names.h"

namespace tpusim::sim {

class SliceState;

// For every thread of control still running: what it waits on, the semaphore's value and
// what it needs, and what last changed it; then the chips that finished.
std::string DescribeWaiters(const SliceState& slice);
std::string DeadlockReport(const SliceState& slice, Picoseconds now);
std::string SpinReport(const SliceState& slice, Picoseconds now);
std::string TimeLimitReport(const SliceState& slice);
// The run met a host-side limit (sim/host_watch.h): the wall clock or the caller's interrupt.
std::string HostLimitReport(const SliceState& slice, Picoseconds now);
// Fails the run (kSemaphoreNotZero) when any semaphore is not zero after every core ended.
void CheckSemaphoresAtExit(SliceState& slice);

}  // namespace tpusim::sim
