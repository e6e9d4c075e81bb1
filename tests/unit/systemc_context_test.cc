// Layer 1: a run that fails leaves no SystemC thread suspended. A suspended thread's stack
// holds the kernel's objects; unless the thread is unwound they are never destroyed (a
// leak under `make check`), and the run's SystemC context cannot be freed.

#include <gtest/gtest.h>

#include <functional>
#include <ostream>

#include "sim/simulation.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using base::CorePort;

// Counts the kernel frames still alive: one Guard lives on each core's stack.
struct Guard {
  explicit Guard(int& alive) : alive_(alive) { ++alive_; }
  ~Guard() { --alive_; }
  int& alive_;
};

struct FailingKernel {
  const char* name;
  ErrorKind expected;
  std::function<void(CorePort&)> after_guard;
  friend void PrintTo(const FailingKernel& kernel, std::ostream* out) { *out << kernel.name; }
};

class SuspendedThreadsTest : public testing::TestWithParam<FailingKernel> {};

TEST_P(SuspendedThreadsTest, AreUnwoundWhenTheRunEnds) {
  const config::Topology topology = topologies::LoadTopology("v5e-2x2");
  base::EngineOptions options;
  options.time_limit = 1'000'000'000;  // 1 ms
  sim::Simulation system(topology, options);
  int alive = 0;
  int entered = 0;
  const base::RunOutcome outcome = system.Run([&](CorePort& core) {
    Guard guard(alive);
    ++entered;
    GetParam().after_guard(core);
  });
  ASSERT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error_kind, GetParam().expected) << outcome.error;
  EXPECT_EQ(entered, 4);
  EXPECT_EQ(alive, 0) << "kernel frames left on suspended thread stacks";
}

void WaitForever(CorePort& core) {
  const base::SemaphoreHandle never = core.AddSemaphore(base::SemaphoreKind::kRegular, "never");
  core.Wait(never, 1, base::WaitKind::kSemaphore, "a signal nobody sends");
}

INSTANTIATE_TEST_SUITE_P(
    FailedRuns, SuspendedThreadsTest,
    testing::Values(FailingKernel{"Deadlock", ErrorKind::kDeadlock, WaitForever},
                    FailingKernel{"TimeLimit", ErrorKind::kTimeLimit,
                                  [](CorePort& core) {
                                    for (;;)
                                      core.Compute(base::ComputeUnit::kVpu, 1000, "spin");
                                  }},
                    FailingKernel{"OneCoreThrows", ErrorKind::kKernelMisuse,
                                  [](CorePort& core) {
                                    if (core.chip() == 3) {
                                      core.Compute(base::ComputeUnit::kVpu, 1000, "work");
                                      throw Error(ErrorKind::kKernelMisuse, "chip 3 gives up.");
                                    }
                                    WaitForever(core);
                                  }}),
    [](const testing::TestParamInfo<FailingKernel>& info) { return info.param.name; });

}  // namespace
}  // namespace tpusim
