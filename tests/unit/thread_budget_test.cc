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

}  // namespace
}  // namespace tpusim::sim
