// Every way the reference evaluator refuses a module: each is a tpusim::Error of kind
// kInvalidArgument whose sentence names the instruction, its opcode and file:line:column,
// or the parameter and device that do not fit.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/evaluator_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::AllOf;
using ::testing::EndsWith;
using testing::EvaluationFailure;
using testing::F32;
using ::testing::HasSubstr;
using testing::ModuleText;

// ModuleText puts the first body line on line 5 of test.hlo.
TEST(ReferenceErrors, AnOpcodeWithoutARuleIsNamedWithItsPlace) {
  const Error error = EvaluationFailure(ModuleText(R"(  %x = f32[2] constant({1, 2})
  ROOT %r = f32[2] frobnicate(%x))"));
  EXPECT_THAT(error.what(),
              AllOf(HasSubstr("%r (frobnicate at test.hlo:6:"),
                    HasSubstr("cannot be evaluated: the reference evaluator has no rule for the "
                              "opcode 'frobnicate'"),
                    EndsWith(".")));
}

TEST(ReferenceErrors, AnElementTypeItDoesNotModel) {
  const Error error = EvaluationFailure(ModuleText(R"(  %x = f64[2] constant({1, 2})
  ROOT %r = f64[2] add(%x, %x))"));
  EXPECT_THAT(error.what(), AllOf(HasSubstr("%x (constant at test.hlo:5:"),
                                  HasSubstr("its element type f64 is not modelled"),
                                  HasSubstr("pred, s8, s32, u32, s64, f16, bf16 and f32")));
}

TEST(ReferenceErrors, AnElidedConstant) {
  const Error error = EvaluationFailure(ModuleText("  ROOT %c = f32[1024] constant({...})"));
  EXPECT_THAT(error.what(),
              AllOf(HasSubstr("%c (constant at test.hlo:5:"), HasSubstr("its literal is elided"),
                    HasSubstr("print_large_constants")));
}

TEST(ReferenceErrors, AnOperationOnATypeItIsNotDefinedFor) {
  const Error bitwise = EvaluationFailure(ModuleText(R"(  %x = f32[2] constant({1, 2})
  ROOT %r = f32[2] and(%x, %x))"));
  EXPECT_THAT(bitwise.what(), HasSubstr("%r (and at test.hlo:6:"));
  EXPECT_THAT(bitwise.what(), HasSubstr("and is not defined on f32"));
  const Error mixed = EvaluationFailure(ModuleText(R"(  %x = s32[2] constant({1, 2})
  ROOT %r = f32[2] add(%x, %x))"));
  EXPECT_THAT(mixed.what(), HasSubstr("its operands are s32 and its result f32"));
}

TEST(ReferenceErrors, AWhileLoopThatDoesNotEnd) {
  const std::string computations = R"(
%forever (s: s32[]) -> pred[] {
  %s = s32[] parameter(0)
  ROOT %yes = pred[] constant(true)
}

%step (t: s32[]) -> s32[] {
  ROOT %t = s32[] parameter(0)
}
)";
  const Error error = EvaluationFailure(ModuleText(R"(  %zero = s32[] constant(0)
  ROOT %loop = s32[] while(%zero), condition=%forever, body=%step)",
                                                   1, 1, computations));
  EXPECT_THAT(error.what(), AllOf(HasSubstr("%loop (while at test.hlo:"),
                                  HasSubstr("it ran 1000000 iterations and its condition is "
                                            "still true")));
}

TEST(ReferenceErrors, DevicesThatDisagreeOnALoopCondition) {
  const std::string computations = R"(
%below_id (s: s32[]) -> pred[] {
  %s = s32[] parameter(0)
  %id = u32[] partition-id()
  %limit = s32[] convert(%id)
  ROOT %lt = pred[] compare(%s, %limit), direction=LT
}

%increment (t: s32[]) -> s32[] {
  %t = s32[] parameter(0)
  %one = s32[] constant(1)
  ROOT %next = s32[] add(%t, %one)
}
)";
  const Error error = EvaluationFailure(ModuleText(R"(  %zero = s32[] constant(0)
  ROOT %loop = s32[] while(%zero), condition=%below_id, body=%increment)",
                                                   2, 1, computations),
                                        {{}, {}});
  EXPECT_THAT(error.what(), AllOf(HasSubstr("%loop (while at test.hlo:"),
                                  HasSubstr("its condition is false on device 0 but not on "
                                            "device 1 at iteration 0")));
}

TEST(ReferenceErrors, ParametersThatDoNotFitTheModule) {
  const std::string text = ModuleText("  ROOT %x = f32[2] parameter(0)", 2, 1);
  const Error devices = EvaluationFailure(text, {{F32({2}, {1, 2})}});
  EXPECT_THAT(devices.what(), HasSubstr("it runs on 2 devices (1 replicas x 2 partitions), but "
                                        "parameters were given for 1; give one list of entry "
                                        "parameters per device."));
  const Error count = EvaluationFailure(text, {{F32({2}, {1, 2})}, {}});
  EXPECT_THAT(count.what(), HasSubstr("device 1 has 0 arrays, but the entry computation %main "
                                      "takes 1 parameters."));
  const Error shape = EvaluationFailure(text, {{F32({2}, {1, 2})}, {F32({3}, {1, 2, 3})}});
  EXPECT_THAT(shape.what(), HasSubstr("device 1's parameter 0 (%x) is f32[3], but the module "
                                      "states f32[2]."));
  const Error tuple = EvaluationFailure(ModuleText("  ROOT %p = (f32[2], f32[2]) parameter(0)"),
                                        {{F32({2}, {1, 2})}});
  EXPECT_THAT(tuple.what(), AllOf(HasSubstr("%p (parameter at test.hlo:5:"),
                                  HasSubstr("tuple and token entry parameters are not modelled")));
}

TEST(ReferenceErrors, ACollectiveWhoseGroupDoesNotAllReachIt) {
  const std::string computations = std::string(testing::kAddF32) + R"(
%summed (a: f32[1]) -> f32[1] {
  %a = f32[1] parameter(0)
  ROOT %s = f32[1] all-reduce(%a), channel_id=1, replica_groups={{0,1}}, to_apply=%add
}

%kept (b: f32[1]) -> f32[1] {
  ROOT %b = f32[1] parameter(0)
}
)";
  const std::string body = R"(  %x = f32[1] parameter(0)
  %id = u32[] partition-id()
  %zero = u32[] constant(0)
  %first = pred[] compare(%id, %zero), direction=EQ
  ROOT %c = f32[1] conditional(%first, %x, %x), true_computation=%summed, false_computation=%kept)";
  const Error error =
      EvaluationFailure(ModuleText(body, 2, 1, computations), {{F32({1}, {1})}, {F32({1}, {2})}});
  EXPECT_THAT(error.what(), AllOf(HasSubstr("%s (all-reduce at test.hlo:"),
                                  HasSubstr("device 1 of its group does not evaluate it")));
}

TEST(ReferenceErrors, CollectivesXlaRejects) {
  const Error global = EvaluationFailure(
      ModuleText("  %x = f32[1] parameter(0)\n  ROOT %r = f32[1] all-reduce(%x), "
                 "replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add",
                 1, 2, testing::kAddF32),
      {{F32({1}, {1})}, {F32({1}, {2})}});
  EXPECT_THAT(global.what(), HasSubstr("use_global_device_ids=true needs a channel_id"));
  const Error split =
      EvaluationFailure(ModuleText("  %x = f32[3] parameter(0)\n  ROOT %a = f32[3] all-to-all(%x), "
                                   "replica_groups={{0,1}}, dimensions={0}",
                                   1, 2),
                        {{F32({3}, {1, 2, 3})}, {F32({3}, {1, 2, 3})}});
  EXPECT_THAT(split.what(), AllOf(HasSubstr("%a (all-to-all at test.hlo:6:"),
                                  HasSubstr("its dimension of size 3 does not split into 2 "
                                            "equal blocks")));
}

TEST(ReferenceErrors, ACustomCallOtherThanSharding) {
  const Error error = EvaluationFailure(ModuleText(R"(  %x = f32[2] constant({1, 2})
  ROOT %r = f32[2] custom-call(%x), custom_call_target="MyKernel")"));
  EXPECT_THAT(error.what(), HasSubstr("the custom-call target 'MyKernel' is not modelled"));
}

}  // namespace
}  // namespace tpusim::hlo::reference
