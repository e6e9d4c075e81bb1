#pragma once

// How many threads of control a run may have at once. SystemC gives each thread (a chip's
// core, an async op of a program) a stack of its own, mapped with a guard page below it: two
// of the process's memory mappings. Linux caps a process's mappings at vm.max_map_count
// (65530 by default), and past it SystemC stops with a raw "E518 stack setup failed". The
// budget refuses the thread that would pass the cap before SystemC is asked for it, with a
// message that names the limit and the fix.

#include <cstddef>
#include <string>

namespace tpusim::sim {

class ThreadBudget {
 public:
  static constexpr size_t kMappingsPerThread = 2;  // the stack and its guard page
  // Left for what the process maps besides stacks while it runs: libraries loaded by
  // plugins, malloc arenas, trace files, the model's large buffers.
  static constexpr size_t kSpareMappings = 1024;

  // `max_map_count` mappings allowed, `in_use` already taken by the process.
  ThreadBudget(size_t max_map_count, size_t in_use);
  // This process's limit and use (/proc/sys/vm/max_map_count, /proc/self/maps), measured
  // now; no limit where they cannot be read.
  static ThreadBudget OfThisProcess();
  // The budget for `live` threads at once, `own` of which the run asking has already
  // started, from the process's last measurement while that is good enough
  // (ThreadBudgetCache): what a run calls, as a measurement reads every line of
  // /proc/self/maps.
  static ThreadBudget ForThisProcess(size_t live, size_t own);

  // Threads that fit at once.
  size_t threads() const { return threads_; }
  size_t max_map_count() const { return max_map_count_; }
  size_t in_use() const { return in_use_; }
  // Throws Error(kCapacity) when `live` threads at once do not fit; `why` says what needs
  // them ("16384 chips, one core thread each").
  void Check(size_t live, const std::string& why) const;

 private:
  size_t max_map_count_;
  size_t in_use_;
  size_t threads_;
};

// A process's budget, measured again only when a run comes near it. Measuring costs the
// kernel a formatted line per mapping (about 50 us, a twentieth of a small run's host
// time; 20 to 30 ms on a pod, with tens of thousands of stacks mapped), and a process's
// mappings change little from one run to the next. So the last measurement serves while
// the threads asked for stay within half of the room it left: the answer is then right
// unless the process has since mapped more than that many threads' worth of mappings
// again. Half of the room is counted from the threads alive when it was measured: from
// none at a run's start (at Linux's default limit, over 30,000 mappings of slack), from
// the run's threads when an activity of the run asked. So a run that starts thousands of
// activities measures a few times as it nears the limit, not once per activity (`matmul` on
// the v5p pod, each chip's second core an activity past half the budget, read
// /proc/self/maps 1,808 times: 21 s of system time). A run nearer the limit, and so every run that
// could be refused, is measured afresh, and its message gives the numbers of that moment.
class ThreadBudgetCache {
 public:
  using Measure = ThreadBudget (*)();
  // A run of this many threads or more is measured at its start whatever the last
  // measurement left room for: what it maps before its threads (inputs, scratch) is then
  // counted, and the measurement is small beside such a run. Its activities, asked for
  // while it runs (own > 0), use the cache as any other.
  static constexpr size_t kAlwaysMeasuredAtStart = 1024;
  explicit ThreadBudgetCache(Measure measure) : measure_(measure) {}

  // As ThreadBudget::ForThisProcess. A measurement taken while `own` threads of the asking
  // run are alive counts their stacks; they are taken off, so the budget stays one of the
  // process without the run, as a measurement at the run's start is.
  ThreadBudget For(size_t live, size_t own);
  // How often it has measured.
  size_t measurements() const { return measurements_; }

 private:
  Measure measure_;
  bool measured_ = false;
  ThreadBudget last_{0, 0};
  size_t live_at_measure_ = 0;  // the threads alive then, of a run that was running (own > 0)
  size_t measurements_ = 0;
};

}  // namespace tpusim::sim
