// When the CLI turns transparent huge pages back on (tools/tpusim/huge_pages.h). The
// process-wide setting a test changes is put back when it ends, so the tests hold whether each
// runs in a process of its own (ctest) or all run in one.

#include "tools/tpusim/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>

#include "tools/tpusim/common_options.h"

namespace tpusim::cli {
namespace {

namespace po = boost::program_options;

bool HugePagesOff() {
  return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1;
}

// Puts huge pages off, as the tpusim executable starts (tools/tpusim/defer_huge_pages.cc) or
// as a host process may have chosen, and restores the process's setting afterwards.
class HugePagesTurnedOff {
 public:
  explicit HugePagesTurnedOff(bool by_the_executable)
      : was_off_(HugePagesOff()), was_deferred_(huge_pages_deferred) {
    EXPECT_EQ(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
    huge_pages_deferred = by_the_executable;
  }
  ~HugePagesTurnedOff() {
    prctl(PR_SET_THP_DISABLE, was_off_ ? 1 : 0, 0, 0, 0);
    huge_pages_deferred = was_deferred_;
  }

 private:
  bool was_off_;
  bool was_deferred_;
};

TEST(HugePages, ComeBackOnlyForASliceOfTheThresholdOrMoreDevices) {
  HugePagesTurnedOff off(/*by_the_executable=*/true);

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
  // A process that links the CLI's pieces without the executable's start-up (the Python
  // module, these tests) and turned huge pages off for reasons of its own.
  HugePagesTurnedOff off(/*by_the_executable=*/false);
  UseHugePagesFor(kHugePageDevices * 16);
  EXPECT_TRUE(HugePagesOff());
}

// Every command loads its slice through CommonOptions::Slice, which decides.
TEST(HugePages, AreTurnedOnWhenTheCommandLineLoadsALargeSliceAndNotASmallOne) {
  HugePagesTurnedOff off(/*by_the_executable=*/true);
  const CommonOptions options;
  const po::variables_map no_flags;

  options.Slice("v5e-4x4", no_flags);
  EXPECT_TRUE(HugePagesOff());
  options.Slice("v4-8x8x16", no_flags);  // 1,024 chips
  EXPECT_FALSE(HugePagesOff());
}

}  // namespace
}  // namespace tpusim::cli
