#pragma once

// SystemC elaborates once per simulation context. tpusim runs many simulations in one
// process (compare, bench, tests), so each run owns a fresh context. This swaps an
// internal SystemC 2.3 global; it is the only place in tpusim that does.
//
// What SystemC 2.3.4 (QuickThreads coroutines, as Debian builds it) needs from us:
// - A context may only be deleted once no thread of it is suspended: deleting a suspended
//   thread frees its stack without running the destructors of the frames on it. Kill the
//   threads first (sc_process_handle::kill unwinds them with sc_unwind_exception, which
//   must not be swallowed); that needs the simulation paused, not stopped.
// - Its coroutines tell AddressSanitizer about most stack switches, but announce the main
//   stack as empty and say nothing when a thread ends (sc_cor_pkg_qt::abort). ASan then
//   believes the code runs on another stack, skips clearing the frames an exception
//   unwinds (__asan_handle_no_return), and later reports them as stack-buffer-overflow.
//   So tpusim repeats the announcement wherever SystemC hands control back to it.

#include <cstddef>

namespace sc_core {
class sc_simcontext;
}

namespace tpusim::sim {

// Owns one SystemC context and makes it current for its lifetime. Every SystemC object of
// the run (events, processes) must be destroyed before it. Contexts of one host thread at
// a time: another thread's first context waits until this thread's last one is gone, so
// runs from several threads take turns. Throws Error(kKernelMisuse) when made while this
// thread's simulation runs (a kernel or program body starting a run).
class SystemCContext {
 public:
  SystemCContext();
  SystemCContext(const SystemCContext&) = delete;
  SystemCContext& operator=(const SystemCContext&) = delete;
  ~SystemCContext();

  // Unwinds the threads a failed run left suspended and frees the notifications it left
  // pending, so the context can be freed. Call on the main stack after sc_start returned,
  // while what their frames point at is alive.
  void EndSuspendedThreads();

  // The base context becomes current again and this thread's hold on SystemC is given back,
  // as by the destructor, but the context and every object in it stay: for a run whose
  // model is never destroyed (base::Engine::LeaveForExit). The destructor then frees
  // nothing, since the context may still hold objects.
  void Leave();

 private:
  sc_core::sc_simcontext* context_;
  bool left_ = false;
};

// Where a SystemC thread's stack lies, and telling ASan which stack runs now. Both are
// no-ops without ASan.
class ThreadStack {
 public:
  ThreadStack() = default;
  // Call first thing in the thread's body; `stack_bytes` is what the thread was spawned
  // with.
  explicit ThreadStack(size_t stack_bytes);
  // Call whenever SystemC resumes the thread (after every wait).
  void Announce() const;

 private:
  const void* bottom_ = nullptr;
  size_t size_ = 0;
};

// Call on the main stack after SystemC hands control back (sc_start returns, a method runs).
void AnnounceMainStack();

}  // namespace tpusim::sim
