#pragma once

// Typed decoders of attribute values. Each reads one Attribute (attribute.h) and throws
// HloError at the exact position in the file where the value stops making sense:
// "x.hlo:7:40: expected an integer in dimensions, found 'a'.". Replica groups, source-target
// pairs and shardings have their own headers (replica_groups.h, sharding.h).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hlo/attribute.h"
#include "hlo/shape.h"

namespace tpusim::hlo {

// Scalars: index=1, is_stable=true, custom_call_target="x" (or a bare token's text),
// to_apply=%add (the name without '%').
int64_t DecodeInt(const Attribute& attribute);
bool DecodeBool(const Attribute& attribute);
std::string DecodeString(const Attribute& attribute);
std::string DecodeName(const Attribute& attribute);

// Lists: dimensions={1,0} or {}; {{0,1},{2,3}}; {true,false} (or a single true/false);
// branch_computations={%a, %b} and control-predecessors={%x} (names without '%').
std::vector<int64_t> DecodeIntList(const Attribute& attribute);
std::vector<std::vector<int64_t>> DecodeIntListList(const Attribute& attribute);
std::vector<bool> DecodeBoolList(const Attribute& attribute);
std::vector<std::string> DecodeNameList(const Attribute& attribute);

// slice={[0:2], [0:128:1]}
struct SliceRange {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceRange&) const = default;
};
std::vector<SliceRange> DecodeSlice(const Attribute& attribute);

// padding=0_0x1_1_0: per dimension low_high[_interior].
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};
std::vector<PaddingDimension> DecodePadding(const Attribute& attribute);

// window={size=3x3 stride=2x2 pad=0_0x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;        // rhs_reversal
  bool operator==(const WindowDimension&) const = default;
};
std::vector<WindowDimension> DecodeWindow(const Attribute& attribute);

// dim_labels=b01f_01io->b01f: which dimension of the input, kernel and output is the batch
// (b), feature (f; kernel: i input, o output) and each spatial dimension (0, 1, ...).
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
};
ConvolutionDimensionNumbers DecodeDimLabels(const Attribute& attribute);

// operand_precision={highest,default} (also precision_config=...), either case.
enum class Precision { kDefault, kHigh, kHighest, kPackedNibble };
std::vector<Precision> DecodePrecisions(const Attribute& attribute);

// direction=GT
enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
ComparisonDirection DecodeComparisonDirection(const Attribute& attribute);

// metadata={op_type="dot" op_name="jit(f)/dot_general" source_file="x.py" source_line=14}
struct Metadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;     // 0: not given
  int64_t stack_frame_id = 0;  // 0: not given
  // Every other key with its value as written (strings decoded), in order.
  std::vector<std::pair<std::string, std::string>> other;
};
Metadata DecodeMetadata(const Attribute& attribute);

// frontend_attributes={_xla_stream_annotation="1", foo="bar"}: (key, value) in order.
std::vector<std::pair<std::string, std::string>> DecodeFrontendAttributes(
    const Attribute& attribute);

// backend_config={...} or backend_config="...": the text (a string's decoded value, or the
// braces as written), and that text as JSON when it is JSON (nesting at most 64 deep).
std::string BackendConfigText(const Attribute& attribute);
std::optional<nlohmann::json> DecodeBackendConfig(const Attribute& attribute);

// output_to_operand_aliasing={{0}: (1, {})}: output index -> (operand, operand index).
struct OperandAlias {
  ShapeIndex output_index;
  int64_t operand = 0;
  ShapeIndex operand_index;
};
std::vector<OperandAlias> DecodeOutputToOperandAliasing(const Attribute& attribute);

// The header's input_output_alias={ {0}: (1, {}, may-alias) }.
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;  // "must-alias"; "may-alias" or nothing: false
};
std::vector<InputOutputAlias> DecodeInputOutputAlias(const Attribute& attribute);

// The header's entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
};
ProgramShape DecodeComputationLayout(const Attribute& attribute);

}  // namespace tpusim::hlo
