// Modules that parse but make no sense to evaluate (operands, attributes and shapes that do
// not fit together, computations that return the wrong thing, collectives whose devices do
// not line up): each is refused with a sentence naming the instruction and what is wrong,
// never a crash or an out-of-bounds read.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/evaluator_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using testing::EvaluationFailure;
using ::testing::HasSubstr;
using testing::ModuleText;

struct Refusal {
  const char* name;
  std::string body;
  std::string expected;
  std::string computations = "";
  int partitions = 1;
};

const char* kComputations = R"(
%add.s32 (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %sum = s32[] add(%a, %b)
}

%returns.s32 (c: f32[], d: f32[]) -> s32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %zero = s32[] constant(0)
}

%one.param (e: s32[2]) -> s32[2] {
  ROOT %e = s32[2] parameter(0)
}

%count (f: s32[]) -> s32[] {
  ROOT %f = s32[] parameter(0)
}
)";

std::string Prefix(const std::string& lines) {
  return "  %x = s32[2] constant({1, 2})\n  %m = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
         "  %zero = s32[] constant(0)\n  %f = f32[2] constant({1, 2})\n" +
         lines;
}

std::vector<Refusal> Refusals() {
  return {
      {"BroadcastOntoAnotherSize", Prefix("  ROOT %r = s32[3,2] broadcast(%x), dimensions={0}"),
       "dimensions does not map its operand's dimensions onto equal ones"},
      {"BroadcastWithoutDimensions", Prefix("  ROOT %r = s32[3,2] broadcast(%x), dimensions={}"),
       "dimensions has 0 entries; it should have one per dimension (1)"},
      {"ReshapeToAnotherCount", Prefix("  ROOT %r = s32[3] reshape(%x)"),
       "does not hold the elements of its result"},
      {"BitcastToAnotherSize", Prefix("  ROOT %r = s32[3] bitcast(%x)"),
       "has another byte size than its result"},
      {"TransposeByANonPermutation", Prefix("  ROOT %r = s32[2,3] transpose(%m), dimensions={0,0}"),
       "dimensions is not a permutation"},
      {"TransposeToTheWrongShape", Prefix("  ROOT %r = s32[2,3] transpose(%m), dimensions={1,0}"),
       "its shape is not its operand's permuted by dimensions"},
      {"SlicePastTheEnd", Prefix("  ROOT %r = s32[5] slice(%x), slice={[0:5]}"),
       "its range 0 does not fit its operand and result"},
      {"DynamicSliceWithoutStarts",
       Prefix("  ROOT %r = s32[1] dynamic-slice(%x), dynamic_slice_sizes={1}"),
       "it needs one scalar start index per operand dimension"},
      {"DynamicSliceWithAFloatStart",
       Prefix("  %s = f32[] constant(1)\n  ROOT %r = s32[1] dynamic-slice(%x, %s), "
              "dynamic_slice_sizes={1}"),
       "its start indices should be integer scalars"},
      {"DynamicSliceLargerThanItsOperand",
       Prefix("  ROOT %r = s32[3] dynamic-slice(%x, %zero), dynamic_slice_sizes={3}"),
       "its slice is larger than its operand"},
      {"DynamicUpdateSliceOfAnotherType",
       Prefix("  ROOT %r = s32[2] dynamic-update-slice(%x, %f, %zero)"),
       "its update should have its operand's rank and element type"},
      {"ConcatenateIntoTheWrongSize",
       Prefix("  ROOT %r = s32[5] concatenate(%x, %x), dimensions={0}"),
       "its operands do not fit its result"},
      {"PadToTheWrongSize", Prefix("  ROOT %r = s32[3] pad(%x, %zero), padding=1_1"),
       "its padding 0 does not give its result's size"},
      {"PadWithAValueOfAnotherType",
       Prefix("  %half = f32[] constant(0.5)\n  ROOT %r = s32[4] pad(%x, %half), padding=1_1"),
       "its padding value should be a scalar of its element type"},
      {"ReverseOutsideItsOperand", Prefix("  ROOT %r = s32[2] reverse(%x), dimensions={3}"),
       "dimensions names 3, outside its operand"},
      {"IotaOutsideItsShape", Prefix("  ROOT %r = s32[2] iota(), iota_dimension=2"),
       "iota_dimension is outside its shape"},
      {"IsFiniteOfIntegers", Prefix("  ROOT %r = pred[2] is-finite(%x)"),
       "is-finite takes a floating-point operand"},
      {"ExponentialOfIntegers", Prefix("  ROOT %r = s32[2] exponential(%x)"),
       "exponential is not defined on s32"},
      {"OperandsOfDifferentSizes",
       Prefix("  %y = s32[3] constant({1, 2, 3})\n  ROOT %r = s32[2] add(%x, %y)"),
       "an operand has shape (3,) where 2 elements are expected"},
      {"SelectByIntegers", Prefix("  ROOT %r = s32[2] select(%x, %x, %x)"),
       "its first operand should be pred"},
      {"BitcastConvertToAnotherWidth", Prefix("  ROOT %r = s8[2] bitcast-convert(%x)"),
       "only a bitcast-convert between types of one width is modelled"},
      {"TooManyOperands", Prefix("  ROOT %r = s32[2] negate(%x, %x)"),
       "it has 2 operands where negate takes 1"},
      {"AResultThatIsNotItsShape", Prefix("  ROOT %r = s32[3] negate(%x)"),
       "it computes s32[2] where its shape is s32[3]"},
      {"ReduceWithoutInit",
       Prefix("  ROOT %r = s32[] reduce(%x), dimensions={0}, to_apply=%add.s32"),
       "it takes N arrays and N init values"},
      {"ReduceFromAnArrayInit",
       Prefix("  ROOT %r = s32[] reduce(%x, %x), dimensions={0}, to_apply=%add.s32"),
       "its init values should be scalars"},
      {"ReduceOutsideItsOperand",
       Prefix("  ROOT %r = s32[] reduce(%x, %zero), dimensions={4}, to_apply=%add.s32"),
       "dimensions names 4, outside its operand"},
      {"AReducerOfAnotherType",
       Prefix("  %fz = f32[] constant(0)\n  ROOT %r = f32[] reduce(%f, %fz), dimensions={0}, "
              "to_apply=%add.s32"),
       "it computes f32[] where its shape is s32[]"},
      {"AReducerThatReturnsAnotherType",
       Prefix("  %fz = f32[] constant(0)\n  ROOT %r = f32[] reduce(%f, %fz), dimensions={0}, "
              "to_apply=%returns.s32"),
       "its reducer should return one scalar per accumulator, of its type"},
      {"AWindowOfAnotherRank",
       Prefix("  ROOT %r = s32[1] reduce-window(%x, %zero), window={size=2x2}, "
              "to_apply=%add.s32"),
       "window needs one entry per dimension"},
      {"AWindowWithoutStride",
       Prefix("  ROOT %r = s32[1] reduce-window(%x, %zero), window={size=2 stride=0}, "
              "to_apply=%add.s32"),
       "its window's strides and dilations should be 1 or more"},
      {"SortAlongNoDimension",
       Prefix("  ROOT %r = s32[2] sort(%x), dimensions={1}, to_apply=%add.s32"),
       "dimensions should name one dimension of its operands"},
      {"SortByAComparatorThatIsNotPred",
       Prefix("  ROOT %r = s32[2] sort(%x), dimensions={0}, to_apply=%add.s32"),
       "its comparator should return a pred scalar"},
      {"MapToAnotherType",
       Prefix("  ROOT %r = f32[2] map(%f, %f), dimensions={0}, to_apply=%returns.s32"),
       "its computation should return one scalar of its result type"},
      {"GatherWithBatchingDims",
       Prefix("  %i = s32[2,1] constant({{0}, {1}})\n  ROOT %r = s32[2,3] gather(%m, %i), "
              "offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, "
              "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, "
              "slice_sizes={1,3}"),
       "operand_batching_dims is not modelled; batching dimensions are not"},
      {"GatherWithLongIndexVectors",
       Prefix("  %i = s32[1,2] constant({{0, 1}})\n  ROOT %r = s32[1,3] gather(%m, %i), "
              "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
              "index_vector_dim=1, slice_sizes={1,3}"),
       "its index vectors have 2 entries, not one per mapped dimension (1)"},
      {"GatherIntoTheWrongShape",
       Prefix("  %i = s32[2,1] constant({{0}, {1}})\n  ROOT %r = s32[2,4] gather(%m, %i), "
              "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
              "index_vector_dim=1, slice_sizes={1,3}"),
       "its shape is not its indices' batch and slice_sizes' offsets"},
      {"ScatterWithoutUpdates",
       Prefix("  ROOT %r = s32[2] scatter(%x, %x), update_window_dims={}, "
              "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
              "to_apply=%add.s32"),
       "it takes N operands, the scatter indices and N updates"},
      {"ScatterUpdatesOfTheWrongShape",
       Prefix("  %i = s32[3] constant({0, 1, 0})\n  ROOT %r = s32[2] scatter(%x, %i, %x), "
              "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
              "index_vector_dim=1, to_apply=%add.s32"),
       "its updates' shape is not its indices' batch and its windows"},
      {"DotOverUnequalDimensions",
       Prefix("  ROOT %r = s32[2,2] dot(%m, %m), lhs_contracting_dims={1}, "
              "rhs_contracting_dims={0}"),
       "its contracting dimensions do not pair up"},
      {"DotOfIntegersAndFloats",
       Prefix("  ROOT %r = f32[] dot(%x, %f), lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
       "it mixes integer and floating-point operands"},
      {"DotWithPackedNibbles",
       Prefix("  ROOT %r = f32[] dot(%f, %f), lhs_contracting_dims={0}, rhs_contracting_dims={0}, "
              "operand_precision={packed_nibble,packed_nibble}"),
       "packed-nibble precision is not modelled"},
      {"DotIntoTheWrongShape",
       Prefix("  ROOT %r = s32[3] dot(%x, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
       "its result shape is not (batch, lhs free, rhs free)"},
      {"AWhileConditionThatIsNotPred",
       Prefix("  ROOT %r = s32[] while(%zero), condition=%count, body=%count"),
       "its condition's result should be a pred scalar"},
      {"AConditionalByAFloat",
       Prefix("  %c = f32[] constant(0)\n  ROOT %r = s32[2] conditional(%c, %x), "
              "branch_computations={%one.param}"),
       "its branch index should be an integer scalar"},
      {"AConditionalMissingABranchOperand",
       Prefix("  ROOT %r = s32[2] conditional(%zero, %x), branch_computations={%one.param, "
              "%one.param}"),
       "it needs its selector and one operand per branch"},
      {"ACallWithTooManyOperands", Prefix("  ROOT %r = s32[2] call(%x, %x), to_apply=%one.param"),
       "The computation %one.param (test.hlo:"},
      {"AnAsyncStartThatIsNotATuple",
       Prefix("  ROOT %r = s32[2] async-start(%x), calls=%one.param"),
       "its result should be a tuple ((operands), result, ...)"},
      {"ACopyStartThatIsNotATuple", Prefix("  ROOT %r = s32[2] copy-start(%x)"),
       "its result should be a tuple"},
      {"ADeviceInNoGroup",
       Prefix("  ROOT %r = s32[2] all-reduce(%x), channel_id=1, replica_groups={{0}}, "
              "to_apply=%add.s32"),
       "device 1 is in none of its groups", "", 2},
      {"TwoPairsWithOneTarget",
       Prefix("  ROOT %r = s32[2] collective-permute(%x), channel_id=1, "
              "source_target_pairs={{0,1},{2,1}}"),
       "device 1 is the target of two pairs", "", 4},
      {"APairOutsideTheModule",
       Prefix("  ROOT %r = s32[2] collective-permute(%x), channel_id=1, "
              "source_target_pairs={{0,5}}"),
       "the pair {0,5} names a partition that does not exist", "", 2},
      {"AnAllToAllTupleWithTooFewOperands",
       Prefix("  ROOT %r = (s32[2]) all-to-all(%x), channel_id=1, replica_groups={{0,1}}"),
       "its tuple form needs one operand per group member", "", 2},
      {"AnAllGatherAlongTwoDimensions",
       Prefix("  ROOT %r = s32[2,6] all-gather(%m), channel_id=1, replica_groups={{0,1}}, "
              "dimensions={0,1}"),
       "dimensions should name one dimension", "", 2},
  };
}

class ReferenceRefusals : public ::testing::TestWithParam<Refusal> {};

TEST_P(ReferenceRefusals, NameTheInstructionAndWhatIsWrong) {
  const Refusal& refusal = GetParam();
  const std::string computations =
      refusal.computations.empty() ? kComputations : refusal.computations;
  const Error error = EvaluationFailure(
      ModuleText(refusal.body, refusal.partitions, 1, computations),
      std::vector<std::vector<dsl::Array>>(static_cast<size_t>(refusal.partitions)));
  EXPECT_THAT(error.what(), HasSubstr(refusal.expected));
  EXPECT_THAT(error.what(), HasSubstr("test.hlo:"));
}

INSTANTIATE_TEST_SUITE_P(Modules, ReferenceRefusals, ::testing::ValuesIn(Refusals()),
                         [](const ::testing::TestParamInfo<Refusal>& info) {
                           return std::string(info.param.name);
                         });

TEST(ReferenceRefusal, AConstantTooLargeForTheParserToKeep) {
  std::string literal = "{";
  for (int i = 0; i <= 65536; ++i)
    literal += i == 0 ? "0" : ",0";
  const Error error =
      EvaluationFailure(ModuleText("  ROOT %c = f32[65537] constant(" + literal + "})"));
  EXPECT_THAT(error.what(), HasSubstr("%c (constant at test.hlo:5:"));
  EXPECT_THAT(error.what(), HasSubstr("its literal has more than 65536 elements"));
}

}  // namespace
}  // namespace tpusim::hlo::reference
