#include "sim/systemc_context.h"

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include "base/errors.h"

#if defined(__SANITIZE_ADDRESS__)
#define TPUSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TPUSIM_ASAN 1
#endif
#endif
#ifdef TPUSIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

// libsystemc's main() calls sc_main, so libsystemc refers to it, and a program with a plain
// main() of its own would not link. This weak definition answers that reference; a program's
// own sc_main replaces it, and a program with its own main() never reaches it (tpusim runs
// each simulation in a context it makes, so nothing needs sc_main to have run).
extern "C" [[gnu::weak]] int sc_main(int, char**) {
  std::fputs(
      "This program defines neither main() nor sc_main(); define one of them to run "
      "tpusim.\n",
      stderr);
  return 1;
}

namespace tpusim::sim {

namespace {
// SystemC prints its banner when the first context starts, which libsystemc's main()
// does before sc_main runs; only a static initializer is early enough to silence it.
const bool kBannerSilenced = [] {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return true;
}();

// The context that was current before tpusim made its own (libsystemc makes one while it
// loads); it is current again between runs.
sc_core::sc_simcontext* BaseContext() {
  static sc_core::sc_simcontext* const base = sc_core::sc_get_curr_simcontext();
  return base;
}

#ifdef TPUSIM_ASAN
struct StackRange {
  const void* bottom = nullptr;
  size_t size = 0;
};

// Tells ASan the code runs on `to` from now on: a switch from a stack to itself. Returns
// what ASan believed before.
StackRange SwitchTo(StackRange to) {
  void* fake_stack = nullptr;
  StackRange before;
  __sanitizer_start_switch_fiber(&fake_stack, to.bottom, to.size);
  __sanitizer_finish_switch_fiber(fake_stack, &before.bottom, &before.size);
  return before;
}

StackRange BelievedStack() {
  const StackRange before = SwitchTo({});
  SwitchTo(before);
  return before;
}

// The stack sc_start is called on, as ASan knew it before SystemC first switched away.
const StackRange& HostStack() {
  thread_local const StackRange stack = BelievedStack();
  return stack;
}
#endif

// SystemC keeps the current context (and QuickThreads its main coroutine) in process-wide
// globals, so one host thread at a time may own contexts: another thread's first context
// waits until the owner's last one is gone. The owner may hold several (they are made and
// destroyed in turn), but not start one while its own simulation runs: a kernel or
// program body that starts a run would swap the running context from under it (E554).
struct Ownership {
  std::mutex mutex;
  std::condition_variable released;
  std::thread::id owner;
  int contexts = 0;  // the owner's
};
Ownership& TheOwnership() {
  static Ownership ownership;  // made on first use: a context may be made in a static
  return ownership;
}

void TakeOwnership() {
  Ownership& o = TheOwnership();
  std::unique_lock lock(o.mutex);
  const std::thread::id me = std::this_thread::get_id();
  if (o.owner == me && sc_core::sc_is_running()) {
    throw Error(ErrorKind::kKernelMisuse,
                "a run was started from inside a running kernel or program body: one "
                "simulation runs at a time on a host thread. Start the second run after the "
                "first returns (outside the body).");
  }
  o.released.wait(lock, [&] { return o.contexts == 0 || o.owner == me; });
  o.owner = me;
  ++o.contexts;
}

void ReleaseOwnership() {
  Ownership& o = TheOwnership();
  const std::lock_guard lock(o.mutex);
  if (--o.contexts > 0) return;
  o.owner = std::thread::id();
  o.released.notify_all();
}

}  // namespace

SystemCContext::SystemCContext() {
  TakeOwnership();
  (void)kBannerSilenced;
  BaseContext();
#ifdef TPUSIM_ASAN
  HostStack();
#endif
  context_ = new sc_core::sc_simcontext();
  sc_core::sc_curr_simcontext = context_;
  sc_core::sc_default_global_context = context_;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  // A paused simulation is how tpusim ends a failed run; it is not news.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

SystemCContext::~SystemCContext() {
  if (left_) return;
  delete context_;
  if (sc_core::sc_curr_simcontext == context_) {
    sc_core::sc_curr_simcontext = BaseContext();
    sc_core::sc_default_global_context = BaseContext();
  }
  ReleaseOwnership();
}

void SystemCContext::Leave() {
  if (left_) return;
  left_ = true;
  if (sc_core::sc_curr_simcontext == context_) {
    sc_core::sc_curr_simcontext = BaseContext();
    sc_core::sc_default_global_context = BaseContext();
  }
  ReleaseOwnership();
}

void SystemCContext::EndSuspendedThreads() {
  std::vector<sc_core::sc_process_handle> threads;
  std::vector<sc_core::sc_process_handle> methods;
  // A thread spawned by another thread (CorePort::Spawn) is that thread's child object,
  // not a top-level one, and killing its parent leaves it suspended: walk the whole tree.
  std::vector<sc_core::sc_object*> objects = sc_core::sc_get_top_level_objects(context_);
  for (size_t i = 0; i < objects.size(); ++i) {
    for (sc_core::sc_object* child : objects[i]->get_child_objects())
      objects.push_back(child);
    sc_core::sc_process_handle process(objects[i]);
    if (!process.valid() || process.terminated()) continue;
    (process.proc_kind() == sc_core::SC_METHOD_PROC_ ? methods : threads).push_back(process);
  }
  if ((threads.empty() && methods.empty()) || !sc_core::sc_is_running()) return;
  // kill() needs a running simulation and a process to call it from: one more delta
  // cycle, in which the methods go first so none of them runs again.
  sc_core::sc_spawn_options options;
  options.spawn_method();
  sc_core::sc_process_handle killer = sc_core::sc_spawn(
      [&] {
        for (auto& method : methods)
          method.kill();
        for (auto& thread : threads)
          thread.kill();
      },
      "tpusim_end_suspended_threads", &options);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  AnnounceMainStack();
  // Spawned while the simulation runs, it is not in the context's process table, which
  // frees the others; once killed, the last handle frees it.
  killer.kill();
  // SystemC frees a timed notification only when it fires: deleting the context deletes
  // its queue but not the entries (sc_simcontext::clean), so a run that failed with
  // timeouts pending would leak them. With every process ended nothing can wake, and
  // running on to starvation pops and frees each one.
  if (sc_core::sc_pending_activity()) {
    sc_core::sc_start();
    AnnounceMainStack();
  }
}

ThreadStack::ThreadStack([[maybe_unused]] size_t stack_bytes) {
#ifdef TPUSIM_ASAN
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const StackRange believed = BelievedStack();
  const auto believed_bottom = reinterpret_cast<uintptr_t>(believed.bottom);
  if (here >= believed_bottom && here - believed_bottom < believed.size) {
    bottom_ = believed.bottom;
    size_ = believed.size;
    return;
  }
  // SystemC entered this thread without telling ASan. Its stacks are mmap'ed whole pages
  // with the entry frames (a few hundred bytes) at the top.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t top = (here + page - 1) & ~(page - 1);
  size_ = (stack_bytes + page - 1) & ~(page - 1);
  bottom_ = reinterpret_cast<const void*>(top - size_);
  Announce();
#endif
}

void ThreadStack::Announce() const {
#ifdef TPUSIM_ASAN
  SwitchTo({bottom_, size_});
#endif
}

void AnnounceMainStack() {
#ifdef TPUSIM_ASAN
  SwitchTo(HostStack());
#endif
}

}  // namespace tpusim::sim
