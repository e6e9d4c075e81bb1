// The typed attribute decoders and shapes: each decodes what XLA prints and fails at the
// exact column of the part that is wrong.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "hlo/attribute_decoders.h"
#include "hlo/shape.h"
#include "tests/hlo/hlo_test_support.h"

namespace tpusim::hlo {
namespace {

using testing::DecodeFailure;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename Decode>
void ExpectDecodeError(Decode decode, int column, const std::string& expected) {
  const HloError error = DecodeFailure(decode);
  EXPECT_EQ(error.line(), 1);
  EXPECT_EQ(error.column(), column) << error.what();
  EXPECT_THAT(error.sentence(), HasSubstr(expected)) << error.what();
}

Attribute A(const std::string& name, const std::string& text) {
  return ParseAttribute(name, text);
}

TEST(AttributeDecoders, ScalarsAndLists) {
  EXPECT_EQ(DecodeInt(A("index", "-3")), -3);
  EXPECT_TRUE(DecodeBool(A("is_stable", "true")));
  EXPECT_EQ(DecodeString(A("custom_call_target", "\"a\\\"b\\n\"")), "a\"b\n");
  EXPECT_EQ(DecodeName(A("to_apply", "%add.1")), "add.1");
  EXPECT_THAT(DecodeIntList(A("dimensions", "{1,0}")), ElementsAre(1, 0));
  EXPECT_TRUE(DecodeIntList(A("dimensions", "{}")).empty());
  EXPECT_THAT(DecodeIntListList(A("groups", "{{0,1},{2,3}}")),
              ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3)));
  EXPECT_THAT(DecodeBoolList(A("p", "{false,true}")), ElementsAre(false, true));
  EXPECT_THAT(DecodeBoolList(A("p", "true")), ElementsAre(true));
  EXPECT_THAT(DecodeNameList(A("branch_computations", "{%a, b.1}")), ElementsAre("a", "b.1"));
  EXPECT_EQ(DecodeComparisonDirection(A("direction", "GE")), ComparisonDirection::kGe);
  EXPECT_THAT(DecodePrecisions(A("precision_config", "{HIGHEST,DEFAULT}")),
              ElementsAre(Precision::kHighest, Precision::kDefault));
}

TEST(AttributeDecoders, ScalarAndListErrors) {
  ExpectDecodeError([] { DecodeInt(A("index", "1x")); }, 2,
                    "expected nothing after the integer in index, found 'x'.");
  ExpectDecodeError([] { DecodeInt(A("index", "{1}")); }, 1,
                    "expected an integer in index, found '{'.");
  ExpectDecodeError([] { DecodeBool(A("is_stable", "1")); }, 1,
                    "expected true or false in is_stable");
  ExpectDecodeError([] { DecodeIntList(A("dimensions", "{0, one}")); }, 5,
                    "expected an integer in dimensions, found 'one'.");
  ExpectDecodeError([] { DecodeIntList(A("dimensions", "1")); }, 1,
                    "expected a list of integers such as {0,1} in dimensions");
  ExpectDecodeError([] { DecodeIntListList(A("g", "{{0},1}")); }, 6,
                    "expected a list of integers such as {0,1} in g");
  ExpectDecodeError([] { DecodeNameList(A("calls", "{%a, 7}")); }, 6,
                    "expected a name such as %add in calls, found '7'.");
  ExpectDecodeError([] { DecodeComparisonDirection(A("direction", "GREATER")); }, 1,
                    "expected a comparison direction (EQ, NE, GE, GT, LE or LT) in direction");
  ExpectDecodeError([] { DecodePrecisions(A("operand_precision", "{highest,fast}")); }, 10,
                    "expected a precision (default, high, highest or packed_nibble)");
}

TEST(AttributeDecoders, SlicePaddingWindow) {
  EXPECT_THAT(DecodeSlice(A("slice", "{[0:2], [0:128:4]}")),
              ElementsAre(SliceRange{0, 2, 1}, SliceRange{0, 128, 4}));
  EXPECT_THAT(DecodePadding(A("padding", "0_0x-1_2_3")),
              ElementsAre(PaddingDimension{0, 0, 0}, PaddingDimension{-1, 2, 3}));
  const std::vector<WindowDimension> window = DecodeWindow(
      A("window",
        "{size=3x2 stride=2x1 pad=0_1x1_1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=1x0}"));
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0], (WindowDimension{3, 2, 0, 1, 1, 2, true}));
  EXPECT_EQ(window[1], (WindowDimension{2, 1, 1, 1, 2, 1, false}));
  EXPECT_TRUE(DecodeWindow(A("window", "{}")).empty());
  ExpectDecodeError([] { DecodeSlice(A("slice", "{[0:2], [1]}")); }, 11,
                    "expected ':' after the start of the range in slice, found ']'.");
  ExpectDecodeError([] { DecodeSlice(A("slice", "{0:2}")); }, 2,
                    "expected a range such as [0:2] in slice");
  ExpectDecodeError([] { DecodePadding(A("padding", "0_0x1")); }, 6,
                    "expected '_' between low and high padding in padding, found end of file.");
  ExpectDecodeError([] { DecodeWindow(A("window", "{size=3x3 stride=2}")); }, 18,
                    "2 dimensions (as many as the window's first item) in window");
  ExpectDecodeError([] { DecodeWindow(A("window", "{size=3 stride=2x2}")); }, 18,
                    "expected no more than 1 dimensions");
  ExpectDecodeError([] { DecodeWindow(A("window", "{size=3 shape=1}")); }, 9,
                    "expected size=, stride=, pad=, lhs_dilate=, rhs_dilate= or rhs_reversal= in "
                    "window, found 'shape'.");
}

TEST(AttributeDecoders, DimLabels) {
  const ConvolutionDimensionNumbers nhwc = DecodeDimLabels(A("dim_labels", "b01f_01io->b01f"));
  EXPECT_EQ(nhwc.input_batch_dimension, 0);
  EXPECT_EQ(nhwc.input_feature_dimension, 3);
  EXPECT_THAT(nhwc.input_spatial_dimensions, ElementsAre(1, 2));
  EXPECT_EQ(nhwc.kernel_input_feature_dimension, 2);
  EXPECT_EQ(nhwc.kernel_output_feature_dimension, 3);
  EXPECT_THAT(nhwc.kernel_spatial_dimensions, ElementsAre(0, 1));
  const ConvolutionDimensionNumbers nchw = DecodeDimLabels(A("dim_labels", "bf10_oi01->fb01"));
  EXPECT_EQ(nchw.input_feature_dimension, 1);
  EXPECT_THAT(nchw.input_spatial_dimensions, ElementsAre(3, 2));
  EXPECT_EQ(nchw.kernel_output_feature_dimension, 0);
  EXPECT_EQ(nchw.output_batch_dimension, 1);
  ExpectDecodeError([] { DecodeDimLabels(A("dim_labels", "b0xf_0io->b0f")); }, 3,
                    "a dimension label (b, f or a spatial digit)");
  ExpectDecodeError([] { DecodeDimLabels(A("dim_labels", "bb0f_0io->b0f")); }, 2,
                    "each label once, not 'b' again");
  ExpectDecodeError([] { DecodeDimLabels(A("dim_labels", "b02f_01io->b01f")); }, 1,
                    "spatial labels numbered 0..2 in dim_labels (1 is missing)");
  ExpectDecodeError([] { DecodeDimLabels(A("dim_labels", "b01f_0io->b01f")); }, 6,
                    "as many spatial labels as the input has (2)");
  ExpectDecodeError([] { DecodeDimLabels(A("dim_labels", "b0f_0io-b0f")); }, 8,
                    "'->' before the output labels");
  ExpectDecodeError([] { DecodeDimLabels(A("dim_labels", "0f_0io->b0f")); }, 1,
                    "labels with one b and one f in dim_labels");
}

TEST(AttributeDecoders, MetadataFrontendAttributesBackendConfig) {
  const Metadata metadata = DecodeMetadata(
      A("metadata",
        "{op_type=\"dot\" op_name=\"jit(f)/dot_general\" source_file=\"x.py\" source_line=14 "
        "source_end_line=15 scheduling_name=\"dot.3\" stack_frame_id=2}"));
  EXPECT_EQ(metadata.op_type, "dot");
  EXPECT_EQ(metadata.op_name, "jit(f)/dot_general");
  EXPECT_EQ(metadata.source_file, "x.py");
  EXPECT_EQ(metadata.source_line, 14);
  EXPECT_EQ(metadata.stack_frame_id, 2);
  EXPECT_THAT(metadata.other,
              ElementsAre(std::pair<std::string, std::string>("source_end_line", "15"),
                          std::pair<std::string, std::string>("scheduling_name", "dot.3")));
  ExpectDecodeError([] { DecodeMetadata(A("metadata", "{op_name=\"a\" stray}")); }, 14,
                    "expected key=value in metadata, found 'stray'.");
  EXPECT_THAT(DecodeFrontendAttributes(
                  A("frontend_attributes", "{_xla_stream_annotation=\"1\",b=\"x y\"}")),
              ElementsAre(std::pair<std::string, std::string>("_xla_stream_annotation", "1"),
                          std::pair<std::string, std::string>("b", "x y")));
  const Attribute braces =
      A("backend_config", "{\"known_trip_count\":{\"n\":\"4\"}, \"list\": [1, 2]}");
  EXPECT_EQ((*DecodeBackendConfig(braces))["known_trip_count"]["n"], "4");
  EXPECT_EQ((*DecodeBackendConfig(braces))["list"][1], 2);
  const Attribute quoted = A("backend_config", "\"{\\\"flag\\\":true}\"");
  EXPECT_EQ(BackendConfigText(quoted), "{\"flag\":true}");
  EXPECT_EQ((*DecodeBackendConfig(quoted))["flag"], true);
  EXPECT_FALSE(DecodeBackendConfig(A("backend_config", "\"opaque bytes\"")).has_value());
  EXPECT_FALSE(DecodeBackendConfig(A("backend_config", "{not json}")).has_value());
  EXPECT_EQ(BackendConfigText(A("backend_config", "{not json}")), "{not json}");
  std::string deep = "\"";
  for (int i = 0; i < 100; ++i)
    deep += "[";
  for (int i = 0; i < 100; ++i)
    deep += "]";
  EXPECT_FALSE(DecodeBackendConfig(A("backend_config", deep + "\"")).has_value());
}

TEST(AttributeDecoders, AliasingAndComputationLayout) {
  const std::vector<OperandAlias> aliases = DecodeOutputToOperandAliasing(
      A("output_to_operand_aliasing", "{{}: (0, {}), {1}: (2, {0,1})}"));
  ASSERT_EQ(aliases.size(), 2u);
  EXPECT_TRUE(aliases[0].output_index.empty());
  EXPECT_EQ(aliases[1].operand, 2);
  EXPECT_THAT(aliases[1].operand_index, ElementsAre(0, 1));
  const std::vector<InputOutputAlias> io = DecodeInputOutputAlias(
      A("input_output_alias", "{ {0}: (1, {}, must-alias), {1}: (0, {2}) }"));
  ASSERT_EQ(io.size(), 2u);
  EXPECT_TRUE(io[0].must_alias);
  EXPECT_EQ(io[0].parameter_number, 1);
  EXPECT_FALSE(io[1].must_alias);
  EXPECT_THAT(io[1].parameter_index, ElementsAre(2));
  ExpectDecodeError(
      [] { DecodeInputOutputAlias(A("input_output_alias", "{ {0}: (1, {}, maybe) }")); }, 16,
      "expected may-alias or must-alias");
  ExpectDecodeError(
      [] { DecodeOutputToOperandAliasing(A("output_to_operand_aliasing", "{{}: 0}")); }, 6,
      "expected '(' after the output index");
  ExpectDecodeError([] { DecodeOutputToOperandAliasing(A("output_to_operand_aliasing", "{{0}}")); },
                    2, "an alias such as {{0}: (1, {})}");
  const ProgramShape program = DecodeComputationLayout(
      A("entry_computation_layout", "{(f32[2,32]{1,0}, (s32[], token[]))->f32[2,32]{0,1}}"));
  ASSERT_EQ(program.parameters.size(), 2u);
  EXPECT_EQ(program.parameters[1].ToString(), "(s32[], token[])");
  EXPECT_EQ(program.result.ToString(), "f32[2,32]{0,1}");
  EXPECT_TRUE(DecodeComputationLayout(A("l", "{()->f32[]}")).parameters.empty());
  ExpectDecodeError([] { DecodeComputationLayout(A("l", "{(f32[2])=>f32[2]}")); }, 10,
                    "expected '->' and the result shape in l");
}

TEST(Shapes, PrintSizesAndCompatibility) {
  Shape matrix = Shape::Array(PrimitiveType::kBF16, {2, 32});
  EXPECT_EQ(matrix.ToString(), "bf16[2,32]");
  matrix.layout = Layout{{1, 0}};
  EXPECT_EQ(matrix.ToString(), "bf16[2,32]{1,0}");
  EXPECT_EQ(matrix.ElementCount(), 64);
  EXPECT_EQ(matrix.ByteSize(), 128);
  const Shape tuple = Shape::Tuple({matrix, Shape::Array(PrimitiveType::kS32, {}), Shape::Token()});
  EXPECT_EQ(tuple.ToString(), "(bf16[2,32]{1,0}, s32[], token[])");
  EXPECT_EQ(tuple.ToString(false), "(bf16[2,32], s32[], token[])");
  EXPECT_EQ(tuple.ByteSize(), 132);
  EXPECT_EQ(tuple.ElementCount(), 0);
  EXPECT_EQ(Shape::Array(PrimitiveType::kF32, {}).ElementCount(), 1);
  EXPECT_EQ(Shape::Array(PrimitiveType::kC128, {3}).ByteSize(), 48);
  EXPECT_EQ(Shape::Array(PrimitiveType::kS4, {3}).ByteSize(), 3);  // unpacked: a byte each
  EXPECT_TRUE(Compatible(matrix, Shape::Array(PrimitiveType::kBF16, {2, 32})));
  EXPECT_FALSE(Compatible(matrix, Shape::Array(PrimitiveType::kF32, {2, 32})));
  EXPECT_FALSE(matrix == Shape::Array(PrimitiveType::kBF16, {2, 32}));  // layouts differ
  EXPECT_THROW((void)Shape::Array(PrimitiveType::kF32, {kUnboundedSize}).ElementCount(), Error);
  EXPECT_THROW((void)Shape::Array(PrimitiveType::kF64, {int64_t{1} << 62, 4}).ByteSize(), Error);
  EXPECT_EQ(ShapeIndexToString({0, 1}), "{0,1}");
}

TEST(Shapes, ElementTypeTable) {
  for (const char* name :
       {"pred", "s4",  "s8",   "s16",      "s32",    "s64",           "u4",
        "u8",   "u16", "u32",  "u64",      "f16",    "bf16",          "f32",
        "f64",  "c64", "c128", "f8e4m3fn", "f8e5m2", "f8e4m3b11fnuz", "f4e2m1fn"}) {
    const std::optional<PrimitiveType> type = PrimitiveTypeFromName(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(PrimitiveTypeName(*type), name);
    EXPECT_THAT(std::string(PrimitiveTypeNames()), HasSubstr(name));
  }
  EXPECT_FALSE(PrimitiveTypeFromName("f31").has_value());
  EXPECT_EQ(BitWidth(PrimitiveType::kS4), 4);
  EXPECT_EQ(ByteWidth(PrimitiveType::kPred), 1);
  EXPECT_EQ(ByteWidth(PrimitiveType::kC64), 8);
  EXPECT_TRUE(IsFloatingPoint(PrimitiveType::kF8E5M2));
  EXPECT_FALSE(IsFloatingPoint(PrimitiveType::kC64));
  EXPECT_TRUE(IsComplex(PrimitiveType::kC128));
  EXPECT_TRUE(IsSignedInteger(PrimitiveType::kS64));
  EXPECT_TRUE(IsUnsignedInteger(PrimitiveType::kU4));
}

}  // namespace
}  // namespace tpusim::hlo

namespace tpusim::hlo {
namespace {

struct DecodeCase {
  std::function<void()> decode;
  int column;
  std::string expected;
};

TEST(AttributeDecoders, EveryOtherMessage) {
  const std::vector<DecodeCase> cases = {
      {[] { DecodeString(A("custom_call_target", "{x}")); }, 1,
       "expected a string such as \"text\" in custom_call_target"},
      {[] { DecodeFrontendAttributes(A("frontend_attributes", "{\"x\"}")); }, 2,
       "expected key=\"value\" in frontend_attributes"},
      {[] { DecodeWindow(A("window", "{size={3}}")); }, 7,
       "expected a value such as 3x3 in window"},
      {[] { DecodeWindow(A("window", "{size=3y3}")); }, 8,
       "expected 'x' between dimensions in window, found 'y3'."},
      {[] { DecodeSlice(A("slice", "{[0:]}")); }, 5,
       "expected the limit of the range in slice, found ']'."},
      {[] { DecodeSlice(A("slice", "{[0:2:1:1]}")); }, 8,
       "expected ']' or ':' and a stride in slice"},
      {[] { DecodePadding(A("padding", "a_0")); }, 1,
       "expected the low padding (as in 0_0x1_1) in padding, found 'a_0'."},
      {[] { DecodeOutputToOperandAliasing(A("o", "{{}: (0 {})}")); }, 9,
       "expected ',' and the operand's shape index in o"},
      {[] { DecodeOutputToOperandAliasing(A("o", "{{}: (0, {} 1)}")); }, 13,
       "expected ')' to close the alias in o"},
      {[] { DecodeOutputToOperandAliasing(A("o", "{{}: (0, {})x}")); }, 13,
       "expected ',' or '}' after the alias in o"},
      {[] { DecodeOutputToOperandAliasing(A("o", "{{}: (0, 1)}")); }, 10,
       "expected '{' to open a list of integers in o"},
      {[] { DecodeOutputToOperandAliasing(A("o", "{{}: (0, {1 2})}")); }, 13,
       "expected ',' or '}' in the list of integers in o"},
      {[] { DecodeOutputToOperandAliasing(A("o", "{{x}: (0, {})}")); }, 3,
       "expected an integer in o, found 'x'."},
      {[] { DecodeInputOutputAlias(A("io", "{ {0}: (1 {}) }")); }, 11,
       "expected ',' and the parameter's shape index in io"},
      {[] { DecodeComputationLayout(A("l", "(f32[])->f32[]")); }, 1,
       "expected '{' to open the layout, as in {(f32[2]{0})->f32[2]{0}} in l"},
      {[] { DecodeComputationLayout(A("l", "{f32[]->f32[]}")); }, 2,
       "expected '(' to open the parameter shapes in l"},
      {[] { DecodeComputationLayout(A("l", "{(f32[] s32[])->f32[]}")); }, 9,
       "expected ',' or ')' after a parameter shape in l"},
      {[] { DecodeComputationLayout(A("l", "{()->f32[] s32[]}")); }, 12,
       "expected '}' after the result shape in l"},
  };
  for (const DecodeCase& c : cases)
    ExpectDecodeError(c.decode, c.column, c.expected);
}

TEST(AttributeDecoders, GetAttributeNamesTheMissingAttribute) {
  const Module module = testing::Parse(testing::Entry("  ROOT %p = f32[] parameter(0)"));
  const HloError error = DecodeFailure(
      [&] { (void)module.entry_computation().root_instruction().GetAttribute("dimensions"); });
  EXPECT_EQ(error.line(), 4);
  EXPECT_EQ(error.column(), 8);
  EXPECT_EQ(error.sentence(),
            "The parameter %p has no attribute dimensions; add dimensions=... after its operands.");
}

}  // namespace
}  // namespace tpusim::hlo
