// The reference evaluator's control flow against results worked out by hand: while loops
// (also with a collective in the body), conditionals by pred and by index (devices taking
// different branches, collectives inside a branch), call, and the sample module with async
// collectives, a conditional and a custom-call.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/evaluator_test_support.h"
#include "tests/hlo/hlo_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::ElementsAre;
using testing::EvaluateText;
using testing::F32;
using testing::ModuleText;
using testing::Values;

TEST(ReferenceControlFlow, WhileLoopWithACounter) {
  const Module module = ParseModuleFile(hlo::testing::ModulePath("while_loop.hlo"));
  const auto results = Evaluate(module, {{F32({4}, {1, 2, 3, 4})}});
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].size(), 1u);
  EXPECT_THAT(Values(results[0][0]), ElementsAre(16, 32, 48, 64));  // doubled 4 times
}

TEST(ReferenceControlFlow, CollectivesInsideALoopBodyRunInLockstep) {
  const std::string computations = std::string(testing::kAddF32) + R"(
%cond (s: (s32[], f32[1])) -> pred[] {
  %s = (s32[], f32[1]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %three), direction=LT
}

%body (t: (s32[], f32[1])) -> (s32[], f32[1]) {
  %t = (s32[], f32[1]) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %v = f32[1] get-tuple-element(%t), index=1
  %sum = f32[1] all-reduce(%v), channel_id=1, replica_groups={{0,1}}, to_apply=%add
  ROOT %r = (s32[], f32[1]) tuple(%next, %sum)
}
)";
  const std::string body = R"(
  %x = f32[1] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[1]) tuple(%zero, %x)
  %loop = (s32[], f32[1]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[1] get-tuple-element(%loop), index=1)";
  const auto results =
      EvaluateText(ModuleText(body, 2, 1, computations), {{F32({1}, {1})}, {F32({1}, {2})}});
  // 1 + 2 = 3, then 6, then 12 on both devices.
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(Values(results[0][0]), ElementsAre(12));
  EXPECT_THAT(Values(results[1][0]), ElementsAre(12));
}

const char* kBranches = R"(
%plus_one (a: f32[1]) -> f32[1] {
  %a = f32[1] parameter(0)
  %one = f32[1] constant({1})
  ROOT %r = f32[1] add(%a, %one)
}

%times_ten (b: f32[1]) -> f32[1] {
  %b = f32[1] parameter(0)
  %ten = f32[1] constant({10})
  ROOT %r = f32[1] multiply(%b, %ten)
}

%negated (c: f32[1]) -> f32[1] {
  %c = f32[1] parameter(0)
  ROOT %r = f32[1] negate(%c)
}
)";

TEST(ReferenceControlFlow, ConditionalByIndexTakesTheLastBranchWhenOutOfRange) {
  const std::string body = R"(
  %x = f32[1] parameter(0)
  %id = u32[] partition-id()
  %index = s32[] convert(%id)
  %minus = s32[] constant(-1)
  %negative = s32[] multiply(%index, %minus)
  %by.id = f32[1] conditional(%index, %x, %x, %x), branch_computations={%plus_one, %times_ten, %negated}
  %by.negative = f32[1] conditional(%negative, %x, %x, %x), branch_computations={%plus_one, %times_ten, %negated}
  ROOT %t = (f32[1], f32[1]) tuple(%by.id, %by.negative))";
  std::vector<std::vector<dsl::Array>> parameters;
  for (int d = 0; d < 4; ++d)
    parameters.push_back({F32({1}, {d + 1.0})});
  const auto results = EvaluateText(ModuleText(body, 4, 1, kBranches), parameters);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_THAT(Values(results[0][0]), ElementsAre(2));
  EXPECT_THAT(Values(results[1][0]), ElementsAre(20));
  EXPECT_THAT(Values(results[2][0]), ElementsAre(-3));
  EXPECT_THAT(Values(results[3][0]), ElementsAre(-4));  // index 3 of 3 branches: the last
  // Index 0 on device 0; -1, -2, -3 are out of range elsewhere.
  EXPECT_THAT(Values(results[0][1]), ElementsAre(2));
  EXPECT_THAT(Values(results[1][1]), ElementsAre(-2));
  EXPECT_THAT(Values(results[3][1]), ElementsAre(-4));
}

TEST(ReferenceControlFlow, ConditionalByPredicateAndCall) {
  const std::string body = R"(
  %x = f32[1] parameter(0)
  %p = pred[] parameter(1)
  %chosen = f32[1] conditional(%p, %x, %x), true_computation=%plus_one, false_computation=%times_ten
  ROOT %called = f32[1] call(%chosen), to_apply=%negated)";
  const auto results =
      EvaluateText(ModuleText(body, 2, 1, kBranches),
                   {{F32({1}, {5}), testing::MakeArray(dsl::DType::kBool, {}, {1})},
                    {F32({1}, {5}), testing::MakeArray(dsl::DType::kBool, {}, {0})}});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(Values(results[0][0]), ElementsAre(-6));
  EXPECT_THAT(Values(results[1][0]), ElementsAre(-50));
}

TEST(ReferenceControlFlow, CollectivesInsideABranchSpanTheDevicesThatTakeIt) {
  const std::string computations = std::string(testing::kAddF32) + R"(
%summed (a: f32[1]) -> f32[1] {
  %a = f32[1] parameter(0)
  ROOT %s = f32[1] all-reduce(%a), channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=%add
}

%summed_negated (b: f32[1]) -> f32[1] {
  %b = f32[1] parameter(0)
  %s = f32[1] all-reduce(%b), channel_id=2, replica_groups={{0,1},{2,3}}, to_apply=%add
  ROOT %n = f32[1] negate(%s)
}
)";
  const std::string body = R"(
  %x = f32[1] parameter(0)
  %id = u32[] partition-id()
  %two = u32[] constant(2)
  %low = pred[] compare(%id, %two), direction=LT
  ROOT %c = f32[1] conditional(%low, %x, %x), true_computation=%summed, false_computation=%summed_negated)";
  std::vector<std::vector<dsl::Array>> parameters;
  for (int d = 0; d < 4; ++d)
    parameters.push_back({F32({1}, {d + 1.0})});
  const auto results = EvaluateText(ModuleText(body, 4, 1, computations), parameters);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_THAT(Values(results[0][0]), ElementsAre(3));
  EXPECT_THAT(Values(results[1][0]), ElementsAre(3));
  EXPECT_THAT(Values(results[2][0]), ElementsAre(-7));
  EXPECT_THAT(Values(results[3][0]), ElementsAre(-7));
}

// tests/hlo/modules/collectives.hlo on 8 partitions: device d's x[i][j] = 1000 d + i and
// which = d % 2. The root is (all-gather of every x, the conditional's result): branch 0
// (even devices) copies the negated all-to-all; branch 1 (odd) negates x.
TEST(ReferenceControlFlow, TheSampleCollectivesModule) {
  const Module module = ParseModuleFile(hlo::testing::ModulePath("collectives.hlo"));
  std::vector<std::vector<dsl::Array>> parameters;
  for (int d = 0; d < 8; ++d) {
    dsl::Array x({8, 128}, dsl::DType::kF32);
    for (int64_t i = 0; i < 8 * 128; ++i)
      x.SetFlat(i, 1000.0 * d + static_cast<double>(i / 128));
    parameters.push_back({x, testing::MakeArray(dsl::DType::kInt32, {}, {d % 2 * 1.0})});
  }
  const auto results = Evaluate(module, parameters);
  ASSERT_EQ(results.size(), 8u);
  // [2,4]<=[4,2]T(1,0) is {{0,2,4,6},{1,3,5,7}}: device d is member d / 2 of group d % 2.
  const std::vector<std::vector<int>> groups = {{0, 2, 4, 6}, {1, 3, 5, 7}};
  for (int d = 0; d < 8; ++d) {
    const auto& out = results[static_cast<size_t>(d)];
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].shape(), (dsl::Shape{64, 128}));
    for (int64_t row = 0; row < 64; ++row)
      ASSERT_EQ(out[0].GetFlat(row * 128 + 5), 1000.0 * (row / 8) + row % 8) << d;
    ASSERT_EQ(out[1].shape(), (dsl::Shape{8, 128}));
    for (int64_t row = 0; row < 8; ++row) {
      // All-to-all: rows 2q, 2q+1 come from member q's rows 2r, 2r+1 (r: d's rank).
      const double expected =
          d % 2 == 0 ? -(1000.0 * groups[0][static_cast<size_t>(row / 2)] + 2 * (d / 2) + row % 2)
                     : -(1000.0 * d + static_cast<double>(row));
      ASSERT_EQ(out[1].GetFlat(row * 128 + 7), expected) << "device " << d << " row " << row;
    }
  }
}

}  // namespace
}  // namespace tpusim::hlo::reference
