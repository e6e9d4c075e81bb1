#include "sim/thread_budget.h"

#include <fstream>
#include <limits>
#include <mutex>

#include "base/errors.h"

namespace tpusim::sim {

ThreadBudget::ThreadBudget(size_t max_map_count, size_t in_use)
    : max_map_count_(max_map_count), in_use_(in_use) {
  const size_t taken = in_use + kSpareMappings;
  threads_ = max_map_count > taken ? (max_map_count - taken) / kMappingsPerThread : 0;
}

ThreadBudget ThreadBudget::OfThisProcess() {
  size_t limit = 0;
  std::ifstream sysctl("/proc/sys/vm/max_map_count");
  if (!(sysctl >> limit) || limit == 0) {
    return ThreadBudget(std::numeric_limits<size_t>::max(), 0);
  }
  size_t in_use = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    ++in_use;
  return ThreadBudget(limit, in_use);
}

ThreadBudget ThreadBudget::ForThisProcess(size_t live, size_t own) {
  // Runs on several OS threads of one process (the Python module's callers) share it.
  static std::mutex mutex;
  static ThreadBudgetCache cache(&ThreadBudget::OfThisProcess);
  const std::lock_guard<std::mutex> lock(mutex);
  return cache.For(live, own);
}

ThreadBudget ThreadBudgetCache::For(size_t live, size_t own) {
  const bool large_start = own == 0 && live >= kAlwaysMeasuredAtStart;
  // A new run counts its half from none, as if measured at its start: an earlier run's
  // threads say nothing of what the process has mapped since.
  if (own == 0) live_at_measure_ = 0;
  // Within half of the room between the threads alive at the measurement and its limit.
  if (measured_ && !large_start && 2 * live <= live_at_measure_ + last_.threads()) return last_;
  const ThreadBudget now = measure_();
  live_at_measure_ = own > 0 ? live : 0;
  const size_t stacks = own * ThreadBudget::kMappingsPerThread;
  last_ = ThreadBudget(now.max_map_count(), now.in_use() > stacks ? now.in_use() - stacks : 0);
  measured_ = true;
  ++measurements_;
  return last_;
}

void ThreadBudget::Check(size_t live, const std::string& why) const {
  if (live <= threads_) return;
  std::string message = "this run needs " + std::to_string(live) + " threads of control at once (";
  message += why;
  message += "), but only " + std::to_string(threads_) +
             " fit: SystemC gives each thread a stack and a guard page, two of the process's "
             "memory mappings, and Linux allows " +
             std::to_string(max_map_count_) + " (vm.max_map_count), " + std::to_string(in_use_) +
             " of them already in use. Raise the limit (sudo sysctl -w "
             "vm.max_map_count=262144, or more: two per thread), or run on fewer chips.";
  throw Error(ErrorKind::kCapacity, message);
}

}  // namespace tpusim::sim
