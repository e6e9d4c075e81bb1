// When the CLI turns transparent huge pages back on (tools/tpusim/huge_pages.h). Each TEST runs
// in a process of its own (gtest_discover_tests), so the process-wide setting one changes does
// not leak into the next.

#include "tools/tpusim/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>

namespace tpusim::cli {
namespace {

bool HugePagesOff() {
  return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1;
}

TEST(HugePages, ComeBackOnlyForASliceOfTheThresholdOrMoreDevices) {
  // As the tpusim executable starts (tools/tpusim/defer_huge_pages.cc).
  ASSERT_EQ(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
  huge_pages_deferred = true;

  UseHugePagesFor(16);
  UseHugePagesFor(kHugePageDevices - 1);
  EXPECT_TRUE(HugePagesOff());
  EXPECT_TRUE(huge_pages_deferred);

  UseHugePagesFor(kHugePageDevices);
  EXPECT_FALSE(HugePagesOff());
  EXPECT_FALSE(huge_pages_deferred);

  // A smaller slice later in the same process (compare, bench) leaves them on.
  UseHugePagesFor(16);
  EXPECT_FALSE(HugePagesOff());
}

TEST(HugePages, AreLeftAsTheProcessHadThemWhenTheStartDidNotTurnThemOff) {
  // A process that links the CLI's pieces without its start-up (the Python module, the tests)
  // and turned huge pages off for reasons of its own.
  ASSERT_EQ(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
  huge_pages_deferred = false;
  UseHugePagesFor(kHugePageDevices * 16);
  EXPECT_TRUE(HugePagesOff());
}

}  // namespace
}  // namespace tpusim::cli
