// sim/thread_budget.h: a run refuses the thread of control that would pass the process's
// memory-mapping limit, with the limit and the fix, instead of SystemC's raw E518.

#include "sim/thread_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "topologies/topology_loader.h"

namespace tpusim::sim {
namespace {

using ::testing::HasSubstr;

TEST(ThreadBudget, TwoMappingsPerThreadOfWhatTheLimitLeaves) {
  const ThreadBudget budget(65530, 200);
  EXPECT_EQ(budget.threads(), (65530 - 200 - ThreadBudget::kSpareMappings) / 2);
  EXPECT_NO_THROW(budget.Check(budget.threads(), "test"));
  // 16384 chips, each with its core and one async op in flight, do not fit.
  EXPECT_LT(budget.threads(), 2u * 16384);
}

TEST(ThreadBudget, RefusesTheThreadPastTheLimitNamingTheLimitAndTheFix) {
  const ThreadBudget budget(65530, 200);
  try {
    budget.Check(budget.threads() + 1, "16384 chips' cores and 16384 activities in flight");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_THAT(e.what(), HasSubstr("needs " + std::to_string(budget.threads() + 1) +
                                    " threads of control at once (16384 chips' cores"));
    EXPECT_THAT(e.what(), HasSubstr("Linux allows 65530 (vm.max_map_count), 200 of them"));
    EXPECT_THAT(e.what(), HasSubstr("sudo sysctl -w vm.max_map_count="));
  }
}

TEST(ThreadBudget, ALimitAlreadySpentLeavesNoThreads) {
  const ThreadBudget budget(1000, 990);
  EXPECT_EQ(budget.threads(), 0u);
  EXPECT_THROW(budget.Check(1, "one chip"), Error);
}

TEST(ThreadBudget, ThisProcessFitsTheLargestSliceACoreEach) {
  // Linux's default, 65530, leaves room for the 16384 cores of the largest slice
  // (topologies/topology_loader.h).
  EXPECT_GE(ThreadBudget::OfThisProcess().threads(), topologies::kMaxChips);
}

// What the fake measurement below returns: a process with `fake_in_use` mappings under
// Linux's default limit.
size_t fake_in_use = 0;
ThreadBudget FakeMeasure() {
  return ThreadBudget(65530, fake_in_use);
}

TEST(ThreadBudgetCache, ReusesTheLastMeasurementForRunsFarFromTheLimit) {
  fake_in_use = 200;
  ThreadBudgetCache cache(&FakeMeasure);
  EXPECT_EQ(cache.For(16, 0).in_use(), 200u);
  EXPECT_EQ(cache.measurements(), 1u);
  // The process maps more; small runs still see the last measurement, and fit.
  fake_in_use = 300;
  const ThreadBudget small = cache.For(16, 0);
  EXPECT_EQ(small.in_use(), 200u);
  EXPECT_EQ(cache.measurements(), 1u);
  EXPECT_NO_THROW(small.Check(16, "test"));
  // A run's activity (one of its threads alive) up to half of what it left room for too.
  const size_t half = small.threads() / 2;
  EXPECT_EQ(cache.For(half, 1).in_use(), 200u);
  EXPECT_EQ(cache.measurements(), 1u);
  // Past half: measured afresh, less the run's own stack and guard page.
  EXPECT_EQ(cache.For(half + 1, 1).in_use(), 298u);
  EXPECT_EQ(cache.measurements(), 2u);
}

TEST(ThreadBudgetCache, ARunThatCouldBeRefusedIsMeasuredAfreshAndNamesTheNewUse) {
  fake_in_use = 200;
  ThreadBudgetCache cache(&FakeMeasure);
  cache.For(4, 0);
  // The process has since mapped almost up to the limit: a large run must not pass on the
  // old figure.
  fake_in_use = 60000;
  const ThreadBudget budget = cache.For(16384, 0);
  EXPECT_EQ(cache.measurements(), 2u);
  EXPECT_EQ(budget.threads(), (65530 - 60000 - ThreadBudget::kSpareMappings) / 2);
  try {
    budget.Check(16384, "16384 chips, one core each");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_THAT(e.what(), HasSubstr("60000 of them already in use"));
  }
  // And the next small run sees the new figure too.
  EXPECT_EQ(cache.For(4, 0).in_use(), 60000u);
}

TEST(ThreadBudgetCache, AMeasurementDuringARunLeavesOutThatRunsOwnStacks) {
  fake_in_use = 50000;  // past half already: every request measures
  ThreadBudgetCache cache(&FakeMeasure);
  // 1000 threads of the run are alive: their 2000 mappings are the run's, not the process's.
  const ThreadBudget budget = cache.For(5000, 1000);
  EXPECT_EQ(budget.in_use(), 50000u - 1000 * ThreadBudget::kMappingsPerThread);
  EXPECT_EQ(cache.measurements(), 1u);
}

TEST(ThreadBudgetCache, ALargeRunIsMeasuredAtItsStartButNotForItsActivities) {
  fake_in_use = 200;
  ThreadBudgetCache cache(&FakeMeasure);
  cache.For(4, 0);
  fake_in_use = 260;  // what the large run mapped before its threads
  const size_t large = ThreadBudgetCache::kAlwaysMeasuredAtStart;
  EXPECT_EQ(cache.For(large, 0).in_use(), 260u);
  EXPECT_EQ(cache.measurements(), 2u);
  // An activity of that run, while its threads live, is served from that measurement.
  EXPECT_EQ(cache.For(large + 1, large).in_use(), 260u);
  EXPECT_EQ(cache.measurements(), 2u);
  // A smaller run below it is still served from the cache.
  EXPECT_EQ(cache.For(large - 1, 0).in_use(), 260u);
  EXPECT_EQ(cache.measurements(), 2u);
}

TEST(ThreadBudgetCache, ARunsManyActivitiesMeasureAFewTimesAsTheyNearTheLimit) {
  fake_in_use = 200;
  ThreadBudgetCache cache(&FakeMeasure);
  // The v5p pod: 8960 core threads, then an activity on every chip, past half the budget.
  const size_t cores = 8960;
  const size_t limit = cache.For(cores, 0).threads();
  ASSERT_GT(2 * cores, limit / 2);
  for (size_t live = cores + 1; live <= 2 * cores; ++live)
    EXPECT_NO_THROW(cache.For(live, live - 1).Check(live, "test"));
  // Each measurement leaves half of the room before the next: a handful, not one per activity.
  EXPECT_LE(cache.measurements(), 3u);
  // Near the limit the room, and so its half, shrinks to a few threads: a run that could be
  // refused is measured afresh.
  const size_t before = cache.measurements();
  fake_in_use = 200 + 2 * (limit - 10);  // its threads' stacks, 180 mappings more besides
  const ThreadBudget near = cache.For(limit, limit - 1);
  EXPECT_EQ(cache.measurements(), before + 1);
  const size_t room = near.threads() - limit;
  cache.For(limit + room / 2 + 1, limit + room / 2);
  EXPECT_EQ(cache.measurements(), before + 2);
  // A new run counts its half from none again.
  fake_in_use = 200;
  const size_t fit = cache.For(16, 0).threads();
  const size_t at_start = cache.measurements();
  cache.For(fit / 2 + 1, 16);
  EXPECT_EQ(cache.measurements(), at_start + 1);
}

TEST(ThreadBudgetCache, ThisProcessMeasuresOnceForSmallRuns) {
  const ThreadBudget first = ThreadBudget::ForThisProcess(4, 0);
  const ThreadBudget again = ThreadBudget::ForThisProcess(4, 0);
  EXPECT_EQ(again.in_use(), first.in_use());
  EXPECT_GE(again.threads(), topologies::kMaxChips);
}

}  // namespace
}  // namespace tpusim::sim
