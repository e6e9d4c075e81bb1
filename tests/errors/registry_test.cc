// Registering a kernel name twice keeps the first kernel and is reported, naming the
// kernel and the fix; registrations run in static initialisers, so nothing is thrown then.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/registry.h"
#include "dsl/program/op_registry.h"
#include "kernels/registry.h"
#include "sim/memory_models.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;

// A registry of its own: a clash stays recorded in the registry it happened in, and the
// process's one must stay sound for the tests that run after this one in the same process.
TEST(Registry, SecondKernelWithATakenNameIsKeptOutAndReported) {
  EXPECT_NO_THROW(kernels::Registry::Get().CheckRegistrations());
  kernels::Registry registry;
  const kernels::KernelInfo& original = *kernels::Registry::Get().Find("all_gather_bidi");
  registry.Add(original);
  EXPECT_NO_THROW(registry.CheckRegistrations());
  const size_t before = registry.kernels().size();
  kernels::KernelInfo copy = original;
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

// base/registry.h, which every other registry is built on: a clash keeps the first entry,
// is recorded (Add runs in static initialisers and must not throw) and is an Error when the
// registry is used, naming the kind and the name.
TEST(Registry, TheOneRegistryTemplateRecordsAClashAndReportsItOnUse) {
  base::Registry<int> registry("widget");
  const size_t clashes_before = base::RegistrationClashes().size();
  registry.Add("a", 1);
  EXPECT_NO_THROW(registry.Check());
  EXPECT_NO_THROW(registry.Add("a", 2));
  ASSERT_EQ(base::RegistrationClashes().size(), clashes_before + 1);
  EXPECT_EQ(base::RegistrationClashes().back(),
            "widget 'a' is registered twice; the first registration is kept: rename the later "
            "one");
  EXPECT_EQ(base::RegistrationClashesSince(clashes_before, "plugin: "),
            "plugin: widget 'a' is registered twice; the first registration is kept: rename the "
            "later one.");
  EXPECT_EQ(base::RegistrationClashesSince(clashes_before + 1, "plugin: "), "");
  try {
    registry.Find("a");
    FAIL() << "a clash was not reported when the registry was used";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("widget 'a' is registered twice"));
  }
  EXPECT_THROW(registry.Names(), Error);
  EXPECT_THROW(registry.All(), Error);
}

// The op registry's ops and call targets: a second op or target of one name is an error
// naming it, not std::terminate from a static initialiser.
TEST(Registry, AProgramOpOrCallTargetWithATakenNameIsAnErrorWhenUsed) {
  dsl::OpRegistry ops;
  dsl::OpDef op;
  op.name = "twice";
  ops.Add(op);
  EXPECT_NO_THROW(ops.Add(op));
  EXPECT_THAT([&] { ops.Find("twice"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("program op 'twice' is registered twice")));
  dsl::OpRegistry targets;
  dsl::CallTarget target;
  target.name = "kernel_twice";
  targets.AddCallTarget(target);
  EXPECT_NO_THROW(targets.AddCallTarget(target));
  EXPECT_THAT([&] { targets.FindCallTarget("kernel_twice"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("pallas_call target 'kernel_twice' is registered twice")));
}

TEST(Registry, AModelWithATakenNameIsAnErrorWhenUsed) {
  sim::ModelRegistry<sim::MemoryModel> models("timing model",
                                              sim::MemoryModel{"bandwidth", "", {}, nullptr});
  EXPECT_NO_THROW(models.Register(sim::MemoryModel{"bandwidth", "again", {}, nullptr}));
  EXPECT_THAT([&] { models.Require("bandwidth", "the HBM of chip 0"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("timing model 'bandwidth' is registered twice; the first "
                            "registration is kept: rename the later one.")));
}

}  // namespace
}  // namespace tpusim
