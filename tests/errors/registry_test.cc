// Registering a kernel name twice keeps the first kernel and is reported, naming the
// kernel and the fix; registrations run in static initialisers, so nothing is thrown then.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "kernels/registry.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;

TEST(Registry, SecondKernelWithATakenNameIsKeptOutAndReported) {
  kernels::Registry& registry = kernels::Registry::Get();
  EXPECT_NO_THROW(registry.CheckRegistrations());
  const size_t before = registry.kernels().size();
  kernels::KernelInfo copy = *registry.Find("all_gather_bidi");
  copy.summary = "an impostor";
  registry.Add(copy);

  EXPECT_EQ(registry.kernels().size(), before);
  EXPECT_NE(registry.Find("all_gather_bidi")->summary, "an impostor");
  try {
    registry.CheckRegistrations();
    FAIL() << "a duplicate name was not reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("kernel 'all_gather_bidi' is registered twice"));
    EXPECT_THAT(e.what(), HasSubstr("rename the later one"));
  }
}

TEST(Registry, LoadingALibraryThatDoesNotExistNamesIt) {
  try {
    kernels::LoadKernelLibrary("/nonexistent/libkernels.so");
    FAIL() << "loading a missing library did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("cannot load kernel library '/nonexistent/libkernels.so'"));
  }
}

}  // namespace
}  // namespace tpusim
