#pragma once

// Where a thread blocked in CoreThread::Wait will read first when it resumes: its stack
// pointer and frame in Wait, the thread, and its wait state. CoreThread::Poke keeps the last
// thread it woke in the slice, and each woken thread keeps the one woken before it, so that
// a resumed thread can ask for the lines of the thread that resumes next
// (CoreThread::PrefetchNextResumed). Only prefetched, never read through: a stale one costs
// nothing.

namespace tpusim::sim {

struct ResumePoint {
  const char* sp = nullptr;
  const char* frame = nullptr;
  const void* thread = nullptr;
  const void* wait_state = nullptr;
};

}  // namespace tpusim::sim
