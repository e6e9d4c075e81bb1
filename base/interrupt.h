#pragma once

// Ctrl-C for runs inside a longer-lived program (the Python module, python/module.cc):
// the program points the simulator at a flag its signal handler sets, and a run in
// progress stops at its next batch of model events. It fails as a run past its time limit
// does (ErrorKind::kTimeLimit: stopped before the end), with a message that says it was
// interrupted. Process-wide, as the signal is.

#include <atomic>

namespace tpusim::base {

void SetInterruptFlag(const std::atomic<bool>* flag);  // not owned; nullptr: none
bool InterruptRequested();

}  // namespace tpusim::base
