// A kernel that binds operands the pallas_call does not pass: an unknown name, a name the
// call gives twice, or a count other than the call's. Each ends the run with a message that
// names both sides (what the kernel asked for, and the call's operands).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

struct Case {
  const char* name;
  KernelFn body;
  std::vector<std::string> out_names;
  std::vector<const char*> expected;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class OperandErrors : public ::testing::TestWithParam<Case> {};

TEST_P(OperandErrors, EndTheRunNamingTheKernelsAndTheCallsSide) {
  const Case& c = GetParam();
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "sem")};
  PallasCall call = pallas_call("bind", c.body, grid, {{{256}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = c.out_names;
  auto program = shard_map(Mesh(testing::MakeTopology({2}, {false})), {P{"x"}}, {P{"x"}}, call);
  auto run =
      testing::RunAndCheckTrace(program, {Array::Random({512}, DType::kF32, 1)}, {}, "failure");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kKernelMisuse) << run.result.error;
  for (const char* part : c.expected)
    EXPECT_THAT(run.result.error, HasSubstr(part));
}

struct TwoRefs {
  Ref x, out;
};

INSTANTIATE_TEST_SUITE_P(
    Binding, OperandErrors,
    ::testing::Values(
        Case{"UnknownName",
             [](Kernel& k, const Refs&) { k.ref("y"); },
             {"out"},
             {"pallas_call 'bind'", "asks for operand 'y'", "no operand of that name",
              "3 (x, out, sem)", "in_names, out_names and the scratch_shapes' names"}},
        Case{"NameGivenTwice",
             [](Kernel& k, const Refs&) { k.ref("x"); },
             {"x"},
             {"asks for operand 'x'", "names two operands 'x'", "3 (x, x, sem)"}},
        Case{"TooFewNames",
             [](Kernel& k, const Refs&) { k.operands<2>(); },
             {"out"},
             {"pallas_call 'bind'", "the kernel binds 2 operands",
              "the call passes 3 (x, out, sem)", "scratch_shapes", "Bind all of them"}},
        Case{"TooManyStructMembers",
             [](Kernel& k, const Refs&) {
               struct FourRefs {
                 Ref x, out, sem, extra;
               };
               k.operands<FourRefs>();
             },
             {"out"},
             {"the kernel binds 4 operands", "the call passes 3 (x, out, sem)"}},
        Case{"TooFewStructMembers",
             [](Kernel& k, const Refs&) { k.operands<TwoRefs>(); },
             {"out"},
             {"the kernel binds 2 operands", "the call passes 3 (x, out, sem)"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// An axis the mesh lacks is the mesh's own error, naming its axes.
TEST(RingErrors, AnAxisTheMeshLacksNamesTheMeshsAxes) {
  GridSpec grid;
  PallasCall call =
      pallas_call("ring", [](Kernel& k, const Refs&) { k.ring("z"); }, grid, {{{1}, DType::kF32}});
  auto program = shard_map(Mesh(testing::MakeTopology({2}, {false})), {P{}}, {P{}}, call);
  auto run = testing::RunAndCheckTrace(program, {Array({1}, DType::kF32)}, {}, "failure");
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error, HasSubstr("mesh axis 'z' does not exist"));
}

}  // namespace
}  // namespace tpusim
