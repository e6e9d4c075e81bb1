#include "hlo/attribute_decoders.h"

#include <array>

#include "hlo/decoder_support.h"

namespace tpusim::hlo {

namespace detail {

int64_t IntOf(const Attribute& attribute, const AttrValue& value, std::string_view what) {
  if (value.kind != AttrValue::Kind::kScalar) {
    attribute.Fail(value, what);
  }
  Lexer lexer = ValueLexer(attribute, value);
  int64_t result = 0;
  if (!lexer.ScanInt(result)) attribute.Fail(value, what);
  lexer.SkipSpace();
  if (!lexer.AtEnd()) FailIn(lexer, attribute, "nothing after the integer");
  return result;
}

const std::vector<AttrValue>& ListItems(const Attribute& attribute, const AttrValue& value,
                                        std::string_view what) {
  if (!value.IsList()) attribute.Fail(value, what);
  return value.items;
}

std::vector<int64_t> ReadBracedInts(Lexer& lexer, const Attribute& attribute) {
  if (!lexer.Consume('{')) FailIn(lexer, attribute, "'{' to open a list of integers");
  std::vector<int64_t> values;
  if (lexer.Consume('}')) return values;
  do {
    int64_t value = 0;
    if (!lexer.ScanInt(value)) FailIn(lexer, attribute, "an integer");
    values.push_back(value);
  } while (lexer.Consume(','));
  if (!lexer.Consume('}')) FailIn(lexer, attribute, "',' or '}' in the list of integers");
  return values;
}

}  // namespace detail

using detail::IntOf;
using detail::ListItems;

int64_t DecodeInt(const Attribute& attribute) {
  return IntOf(attribute, attribute.value, "an integer");
}

bool DecodeBool(const Attribute& attribute) {
  const AttrValue& value = attribute.value;
  if (value.IsScalar() && value.text == "true") return true;
  if (value.IsScalar() && value.text == "false") return false;
  attribute.Fail(value, "true or false");
}

std::string DecodeString(const Attribute& attribute) {
  const AttrValue& value = attribute.value;
  if (value.IsString()) return value.value;
  if (value.IsScalar()) return value.text;
  attribute.Fail(value, "a string such as \"text\"");
}

namespace {

std::string NameOf(const Attribute& attribute, const AttrValue& value) {
  if (value.IsScalar()) {
    Lexer lexer = detail::ValueLexer(attribute, value);
    const std::string_view name = lexer.ScanName();
    lexer.SkipSpace();
    if (!name.empty() && lexer.AtEnd()) return std::string(name);
  }
  attribute.Fail(value, "a name such as %add");
}

}  // namespace

std::string DecodeName(const Attribute& attribute) {
  return NameOf(attribute, attribute.value);
}

std::vector<int64_t> DecodeIntList(const Attribute& attribute) {
  std::vector<int64_t> values;
  for (const AttrValue& item :
       ListItems(attribute, attribute.value, "a list of integers such as {0,1}")) {
    values.push_back(IntOf(attribute, item, "an integer"));
  }
  return values;
}

std::vector<std::vector<int64_t>> DecodeIntListList(const Attribute& attribute) {
  std::vector<std::vector<int64_t>> lists;
  const char* what = "a list of integer lists such as {{0,1},{2,3}}";
  for (const AttrValue& list : ListItems(attribute, attribute.value, what)) {
    std::vector<int64_t>& values = lists.emplace_back();
    for (const AttrValue& item : ListItems(attribute, list, "a list of integers such as {0,1}")) {
      values.push_back(IntOf(attribute, item, "an integer"));
    }
  }
  return lists;
}

std::vector<bool> DecodeBoolList(const Attribute& attribute) {
  if (attribute.value.IsScalar()) return {DecodeBool(attribute)};
  std::vector<bool> values;
  for (const AttrValue& item :
       ListItems(attribute, attribute.value, "true, false or a list of them")) {
    if (item.IsScalar() && (item.text == "true" || item.text == "false")) {
      values.push_back(item.text == "true");
    } else {
      attribute.Fail(item, "true or false");
    }
  }
  return values;
}

std::vector<std::string> DecodeNameList(const Attribute& attribute) {
  if (attribute.value.IsScalar()) return {NameOf(attribute, attribute.value)};
  std::vector<std::string> names;
  for (const AttrValue& item :
       ListItems(attribute, attribute.value, "a list of names such as {%a, %b}")) {
    names.push_back(NameOf(attribute, item));
  }
  return names;
}

std::vector<Precision> DecodePrecisions(const Attribute& attribute) {
  static constexpr std::array<std::pair<std::string_view, Precision>, 4> kNames = {{
      {"default", Precision::kDefault},
      {"high", Precision::kHigh},
      {"highest", Precision::kHighest},
      {"packed_nibble", Precision::kPackedNibble},
  }};
  std::vector<Precision> precisions;
  for (const AttrValue& item :
       ListItems(attribute, attribute.value, "a list of precisions such as {highest,default}")) {
    std::string lower = item.text;
    for (char& c : lower)
      c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool found = false;
    for (const auto& [name, precision] : kNames) {
      if (item.IsScalar() && lower == name) {
        precisions.push_back(precision);
        found = true;
      }
    }
    if (!found) attribute.Fail(item, "a precision (default, high, highest or packed_nibble)");
  }
  return precisions;
}

ComparisonDirection DecodeComparisonDirection(const Attribute& attribute) {
  static constexpr std::array<std::pair<std::string_view, ComparisonDirection>, 6> kNames = {{
      {"EQ", ComparisonDirection::kEq},
      {"NE", ComparisonDirection::kNe},
      {"GE", ComparisonDirection::kGe},
      {"GT", ComparisonDirection::kGt},
      {"LE", ComparisonDirection::kLe},
      {"LT", ComparisonDirection::kLt},
  }};
  for (const auto& [name, direction] : kNames) {
    if (attribute.value.IsScalar() && attribute.value.text == name) return direction;
  }
  attribute.Fail(attribute.value, "a comparison direction (EQ, NE, GE, GT, LE or LT)");
}

Metadata DecodeMetadata(const Attribute& attribute) {
  Metadata metadata;
  for (const AttrValue& item :
       ListItems(attribute, attribute.value, "a list of key=value pairs such as {op_name=\"x\"}")) {
    if (item.key.empty()) attribute.Fail(item, "key=value");
    const std::string text = item.IsString() ? item.value : item.text;
    if (item.key == "op_type") {
      metadata.op_type = text;
    } else if (item.key == "op_name") {
      metadata.op_name = text;
    } else if (item.key == "source_file") {
      metadata.source_file = text;
    } else if (item.key == "source_line") {
      metadata.source_line = IntOf(attribute, item, "a line number");
    } else if (item.key == "stack_frame_id") {
      metadata.stack_frame_id = IntOf(attribute, item, "a stack frame id");
    } else {
      metadata.other.emplace_back(item.key, text);
    }
  }
  return metadata;
}

std::vector<std::pair<std::string, std::string>> DecodeFrontendAttributes(
    const Attribute& attribute) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const AttrValue& item :
       ListItems(attribute, attribute.value, "a list of key=\"value\" pairs")) {
    if (item.key.empty()) attribute.Fail(item, "key=\"value\"");
    pairs.emplace_back(item.key, item.IsString() ? item.value : item.text);
  }
  return pairs;
}

std::string BackendConfigText(const Attribute& attribute) {
  return attribute.value.IsString() ? attribute.value.value : attribute.value.text;
}

std::optional<nlohmann::json> DecodeBackendConfig(const Attribute& attribute) {
  const std::string text = BackendConfigText(attribute);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (text[first] != '{' && text[first] != '[')) return std::nullopt;
  // nlohmann's parser and destructor are iterative, but a document this deep is no backend
  // config: it stays text, as anything else that is not JSON.
  int depth = 0;
  bool in_string = false;
  for (size_t i = first; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxNestingDepth) return std::nullopt;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

}  // namespace tpusim::hlo
