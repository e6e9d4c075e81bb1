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
  // This process's limit and use (/proc/sys/vm/max_map_count, /proc/self/maps); no limit
  // where they cannot be read.
  static ThreadBudget OfThisProcess();

  // Threads that fit at once.
  size_t threads() const { return threads_; }
  // Throws Error(kCapacity) when `live` threads at once do not fit; `why` says what needs
  // them ("16384 chips, one core thread each").
  void Check(size_t live, const std::string& why) const;

 private:
  size_t max_map_count_;
  size_t in_use_;
  size_t threads_;
};

}  // namespace tpusim::sim
