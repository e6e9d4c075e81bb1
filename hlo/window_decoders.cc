// The decoders of array-geometry attributes: slice, padding, window and dim_labels.

#include <string>

#include "hlo/attribute_decoders.h"
#include "hlo/decoder_support.h"

namespace tpusim::hlo {

using detail::FailIn;
using detail::ValueLexer;

namespace {

int64_t ReadInt(Lexer& lexer, const Attribute& attribute, std::string_view what) {
  int64_t value = 0;
  if (!lexer.ScanInt(value)) FailIn(lexer, attribute, what);
  return value;
}

// Reads "AxBxC" from a scalar value, each part by `read_part`.
template <typename ReadPart>
void ForEachXPart(const Attribute& attribute, const AttrValue& value, ReadPart read_part) {
  if (!value.IsScalar()) attribute.Fail(value, "a value such as 3x3");
  Lexer lexer = ValueLexer(attribute, value);
  do {
    read_part(lexer);
  } while (lexer.Consume('x'));
  lexer.SkipSpace();
  if (!lexer.AtEnd()) FailIn(lexer, attribute, "'x' between dimensions");
}

}  // namespace

std::vector<SliceRange> DecodeSlice(const Attribute& attribute) {
  std::vector<SliceRange> ranges;
  const char* what = "a list of ranges such as {[0:2], [0:128:1]}";
  for (const AttrValue& item : detail::ListItems(attribute, attribute.value, what)) {
    if (item.kind != AttrValue::Kind::kBracket) attribute.Fail(item, "a range such as [0:2]");
    Lexer lexer = ValueLexer(attribute, item);
    lexer.Advance();  // '['
    SliceRange range;
    range.start = ReadInt(lexer, attribute, "the start of the range");
    if (!lexer.Consume(':')) FailIn(lexer, attribute, "':' after the start of the range");
    range.limit = ReadInt(lexer, attribute, "the limit of the range");
    if (lexer.Consume(':')) range.stride = ReadInt(lexer, attribute, "the stride of the range");
    if (!lexer.Consume(']')) FailIn(lexer, attribute, "']' or ':' and a stride");
    ranges.push_back(range);
  }
  return ranges;
}

std::vector<PaddingDimension> DecodePadding(const Attribute& attribute) {
  std::vector<PaddingDimension> dimensions;
  ForEachXPart(attribute, attribute.value, [&](Lexer& lexer) {
    PaddingDimension dimension;
    dimension.low = ReadInt(lexer, attribute, "the low padding (as in 0_0x1_1)");
    if (!lexer.Consume('_')) FailIn(lexer, attribute, "'_' between low and high padding");
    dimension.high = ReadInt(lexer, attribute, "the high padding");
    if (lexer.Consume('_')) dimension.interior = ReadInt(lexer, attribute, "the interior padding");
    dimensions.push_back(dimension);
  });
  return dimensions;
}

std::vector<WindowDimension> DecodeWindow(const Attribute& attribute) {
  std::vector<WindowDimension> dimensions;
  bool sized = false;
  const char* what = "a window such as {size=3x3 stride=2x2 pad=0_0x1_1}";
  for (const AttrValue& item : detail::ListItems(attribute, attribute.value, what)) {
    size_t index = 0;
    auto next = [&](Lexer& lexer) -> WindowDimension& {
      if (!sized) dimensions.emplace_back();
      if (index >= dimensions.size()) {
        FailIn(lexer, attribute,
               "no more than " + std::to_string(dimensions.size()) +
                   " dimensions (the number in the window's first item)");
      }
      return dimensions[index++];
    };
    if (item.key == "size" || item.key == "stride" || item.key == "lhs_dilate" ||
        item.key == "rhs_dilate" || item.key == "rhs_reversal") {
      ForEachXPart(attribute, item, [&](Lexer& lexer) {
        WindowDimension& dimension = next(lexer);
        const int64_t value = ReadInt(lexer, attribute, "an integer");
        if (item.key == "size") dimension.size = value;
        if (item.key == "stride") dimension.stride = value;
        if (item.key == "lhs_dilate") dimension.base_dilation = value;
        if (item.key == "rhs_dilate") dimension.window_dilation = value;
        if (item.key == "rhs_reversal") dimension.reversal = value != 0;
      });
    } else if (item.key == "pad") {
      ForEachXPart(attribute, item, [&](Lexer& lexer) {
        WindowDimension& dimension = next(lexer);
        dimension.padding_low = ReadInt(lexer, attribute, "the low padding (as in 0_0x1_1)");
        if (!lexer.Consume('_')) FailIn(lexer, attribute, "'_' between low and high padding");
        dimension.padding_high = ReadInt(lexer, attribute, "the high padding");
      });
    } else {
      FailExpected(
          {attribute.location.source, item.key.empty() ? item.offset : item.key_offset},
          "size=, stride=, pad=, lhs_dilate=, rhs_dilate= or rhs_reversal= in " + attribute.name);
    }
    if (index != dimensions.size()) {
      attribute.Fail(item, std::to_string(dimensions.size()) +
                               " dimensions (as many as the window's first item)");
    }
    sized = true;
  }
  return dimensions;
}

namespace {

// One of the three parts of dim_labels: the position of each letter and of each spatial
// digit. Letters must each appear once; digits must be 0..n-1.
struct LabelPart {
  int64_t first = -1;   // position of b (lhs, out) or i (kernel)
  int64_t second = -1;  // position of f (lhs, out) or o (kernel)
  std::vector<int64_t> spatial;
};

LabelPart ReadLabels(Lexer& lexer, const Attribute& attribute, char first, char second) {
  LabelPart part;
  const std::string expected =
      std::string("a dimension label (") + first + ", " + second + " or a spatial digit)";
  std::vector<int64_t> by_digit(10, -1);
  int64_t position = 0;
  const size_t start = lexer.offset();
  while (IsLetter(lexer.Peek()) || IsDigit(lexer.Peek())) {
    const char c = lexer.Peek();
    int64_t* slot = c == first    ? &part.first
                    : c == second ? &part.second
                    : IsDigit(c)  ? &by_digit[static_cast<size_t>(c - '0')]
                                  : nullptr;
    if (slot == nullptr) FailIn(lexer, attribute, expected);
    if (*slot != -1)
      FailIn(lexer, attribute, std::string("each label once, not '") + c + "' again");
    *slot = position++;
    lexer.Advance();
  }
  if (part.first == -1 || part.second == -1) {
    lexer.FailAt(start, std::string("labels with one ") + first + " and one " + second + " in " +
                            attribute.name);
  }
  for (size_t digit = 0; digit < by_digit.size(); ++digit) {
    if (by_digit[digit] == -1) {
      for (size_t later = digit + 1; later < by_digit.size(); ++later) {
        if (by_digit[later] != -1) {
          lexer.FailAt(start, "spatial labels numbered 0.." + std::to_string(later) + " in " +
                                  attribute.name + " (" + std::to_string(digit) + " is missing)");
        }
      }
      break;
    }
    part.spatial.push_back(by_digit[digit]);
  }
  return part;
}

}  // namespace

ConvolutionDimensionNumbers DecodeDimLabels(const Attribute& attribute) {
  if (!attribute.value.IsScalar())
    attribute.Fail(attribute.value, "labels such as b01f_01io->b01f");
  Lexer lexer = ValueLexer(attribute, attribute.value);
  const LabelPart input = ReadLabels(lexer, attribute, 'b', 'f');
  if (lexer.Peek() != '_') FailIn(lexer, attribute, "'_' between the input and kernel labels");
  lexer.Advance();
  const size_t kernel_start = lexer.offset();
  const LabelPart kernel = ReadLabels(lexer, attribute, 'i', 'o');
  if (!lexer.ConsumeText("->")) FailIn(lexer, attribute, "'->' before the output labels");
  const size_t output_start = lexer.offset();
  const LabelPart output = ReadLabels(lexer, attribute, 'b', 'f');
  if (!lexer.AtEnd()) FailIn(lexer, attribute, "the end of the labels");
  for (const auto& [part, start] :
       {std::pair{&kernel, kernel_start}, std::pair{&output, output_start}}) {
    if (part->spatial.size() != input.spatial.size()) {
      lexer.FailAt(start, "as many spatial labels as the input has (" +
                              std::to_string(input.spatial.size()) + ") in " + attribute.name);
    }
  }
  ConvolutionDimensionNumbers numbers;
  numbers.input_batch_dimension = input.first;
  numbers.input_feature_dimension = input.second;
  numbers.input_spatial_dimensions = input.spatial;
  numbers.kernel_input_feature_dimension = kernel.first;
  numbers.kernel_output_feature_dimension = kernel.second;
  numbers.kernel_spatial_dimensions = kernel.spatial;
  numbers.output_batch_dimension = output.first;
  numbers.output_feature_dimension = output.second;
  numbers.output_spatial_dimensions = output.spatial;
  return numbers;
}

}  // namespace tpusim::hlo
