// Many runs in one process (compare, bench, the tests) do not leak: each run's SystemC
// context, module tree, threads (including those a failed run leaves suspended) and buffers
// go with it. The resident set after 100 runs stays within 8 MiB of what it was after 20,
// which is after the allocator, the code and every lazily made table have settled.
// malloc_trim before each reading hands glibc's freed heap back, so what is counted is what is
// live. jemalloc, which the test binaries link, keeps freed pages for its next allocations
// (base/jemalloc_conf.cc), so there a leak shows as a heap that outgrows the runs' peak. Its
// huge pages are off for this binary (tests/CMakeLists.txt).

#include <malloc.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <systemc>

#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"
#include "traces/trace_sink.h"

namespace tpusim::modules {
namespace {

constexpr int kRuns = 100;
constexpr int kSettled = 20;
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kBound = 8 * kMiB;

uint64_t ResidentBytes() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void ExpectFlat(const std::function<void(int)>& run) {
#ifdef TPUSIM_TEST_ASAN
  // AddressSanitizer keeps freed memory in quarantine (256 MiB), so the resident set grows
  // for a while whatever the model does; `make check` finds leaks with LeakSanitizer.
  GTEST_SKIP() << "the resident set says nothing under AddressSanitizer";
#endif
  uint64_t settled = 0;
  for (int i = 1; i <= kRuns; ++i) {
    run(i);
    if (::testing::Test::HasFatalFailure()) return;
    if (i == kSettled) settled = ResidentBytes();
  }
  const uint64_t after = ResidentBytes();
  EXPECT_LE(after, settled + kBound)
      << "resident " << settled / kMiB << " MiB after run " << kSettled << ", " << after / kMiB
      << " MiB after run " << kRuns;
}

TEST(ManyRuns, SimulationsThatEndWellOrFailLeaveMemoryFlat) {
  const auto topology = testing::MakeTopology({2, 2}, {false, false});
  traces::NullTraceSink trace;  // traced runs keep every DMA until the end of the run
  ExpectFlat([&](int i) {
    if (i % 5 == 0) {
      // A deadlock: every core's thread is left suspended, and unwound when the run ends.
      sim::Simulation simulation(topology, TimingOnly());
      std::vector<base::SemaphoreHandle> never;
      for (ChipId chip = 0; chip < 4; ++chip)
        never.push_back(simulation.AddSemaphore(chip, base::SemaphoreKind::kRegular, "never"));
      const auto outcome = simulation.Run([&](base::CorePort& core) {
        core.Wait(never[core.chip()], 1, base::WaitKind::kSemaphore, "a signal nobody sends");
      });
      ASSERT_EQ(outcome.error_kind, ErrorKind::kDeadlock) << outcome.error;
      return;
    }
    // Functional DMAs (1 MiB each, bytes moved by DMI) over links and within chips.
    base::EngineOptions options;
    if (i % 2 == 0) options.trace = &trace;
    const uint64_t bytes = kMiB;
    DmaRun run(topology,
               {{0, base::MemorySpace::kHbm, 3, base::MemorySpace::kHbm, bytes},
                {3, base::MemorySpace::kHbm, 0, base::MemorySpace::kVmem, bytes},
                {1, base::MemorySpace::kHbm, 1, base::MemorySpace::kVmem, bytes},
                {2, base::MemorySpace::kVmem, 1, base::MemorySpace::kHbm, bytes}},
               options);
    run.FillSource(0, std::vector<uint8_t>(bytes, static_cast<uint8_t>(i)));
    run.Run();
    ASSERT_EQ(run.ReadDestination(0)[bytes - 1], static_cast<uint8_t>(i));
  });
}

// SystemC frees a timed notification only when it fires, and deleting a context leaves
// the pending ones allocated (16 bytes each, too few for the resident set to show, but
// LeakSanitizer found them after 900,000 fuzzed runs). A run that meets its time limit
// with a DMA still in flight must leave none pending.
TEST(ManyRuns, ARunThatMeetsItsTimeLimitLeavesNoNotificationPending) {
  const auto topology = testing::MakeTopology({2, 2}, {false, false});
  base::EngineOptions options = TimingOnly();
  options.time_limit = 1'000;  // 1 ns: a 1 MiB copy takes far longer
  sim::Simulation simulation(topology, options);
  const auto outcome = simulation.Run([](base::CorePort& core) {
    const base::ByteBox box{0, {kMiB}, {1}, 1};
    base::DmaRequest copy;
    copy.source = {core.Allocate(base::MemorySpace::kHbm, kMiB, "src", {}), box};
    copy.destination = {core.Allocate(base::MemorySpace::kVmem, kMiB, "dst", {}), box};
    copy.recv_semaphore = core.AddSemaphore(base::SemaphoreKind::kDma, "copy");
    copy.label = "copy";
    core.StartDma(copy);
    core.Wait(copy.recv_semaphore, kMiB, base::WaitKind::kDma, "copy");
  });
  ASSERT_EQ(outcome.error_kind, ErrorKind::kTimeLimit) << outcome.error;
  EXPECT_FALSE(sc_core::sc_pending_activity());
}

TEST(ManyRuns, ShardMapRunsOfALibraryCollectiveLeaveMemoryFlat) {
  const auto* info = kernels::Registry::Get().Find("all_gather_bidi");
  ASSERT_NE(info, nullptr);
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}));
  const kernels::Workload workload =
      info->make(mesh, testing::ParamsFor("all_gather_bidi", {{"bytes", kMiB}}));
  ExpectFlat([&](int) {
    const dsl::RunResult result = workload.program.Run(workload.inputs, {});
    ASSERT_TRUE(result.ok) << result.error;
    ASSERT_TRUE(dsl::CompareExact(result.outputs[0], workload.expected[0]).equal);
  });
}

}  // namespace
}  // namespace tpusim::modules
