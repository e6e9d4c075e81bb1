// Literals of constant(...): scalars (0, -inf, nan, true, 1e-05, (1, 2) for complex),
// nested braces one level per dimension ({{1,2},{3,4}}), an elided {...}, and tuples
// (kept as text).

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "hlo/parse_state.h"

namespace tpusim::hlo::detail {

namespace {

bool IsNumberChar(char c) {
  return IsDigit(c) || IsLetter(c) || c == '.' || c == '+' || c == '-' || c == '_';
}

class LiteralReader {
 public:
  LiteralReader(Lexer& lexer, const Shape& shape, bool keep_values)
      : lexer_(lexer), shape_(shape), keep_values_(keep_values) {}

  std::vector<double> values;

  void ReadArray(size_t dimension) {
    if (dimension == shape_.dimensions.size()) {
      ReadElement();
      return;
    }
    const std::string what = "'{' to open dimension " + std::to_string(dimension) + " of the " +
                             shape_.ToString(false) + " literal";
    lexer_.Expect('{', what);
    const int64_t size = shape_.dimensions[dimension];
    for (int64_t i = 0; i < size; ++i) {
      if (i > 0) {
        lexer_.Expect(',', "',' and " + std::to_string(size - i) + " more entries of dimension " +
                               std::to_string(dimension) + " (size " + std::to_string(size) + ")");
      }
      ReadArray(dimension + 1);
    }
    lexer_.Expect('}', "'}' after the " + std::to_string(size) + " entries of dimension " +
                           std::to_string(dimension) + " of the " + shape_.ToString(false) +
                           " literal");
  }

 private:
  void ReadElement() {
    if (IsComplex(shape_.element_type)) {
      lexer_.Expect('(', "'(' to open a complex value (real, imaginary)");
      const double real = ReadNumber();
      lexer_.Expect(',', "',' between the real and imaginary parts");
      const double imaginary = ReadNumber();
      lexer_.Expect(')', "')' to close the complex value");
      Keep(real);
      Keep(imaginary);
      return;
    }
    Keep(ReadNumber());
  }

  void Keep(double value) {
    if (keep_values_) values.push_back(value);
  }

  double ReadNumber() {
    lexer_.SkipSpace();
    const size_t start = lexer_.offset();
    while (IsNumberChar(lexer_.Peek()))
      lexer_.Advance();
    const std::string token(lexer_.Slice(start, lexer_.offset()));
    const bool pred = shape_.element_type == PrimitiveType::kPred;
    if (token == "true" || token == "false") {
      if (!pred)
        lexer_.FailAt(start, std::string("a number for the ") +
                                 std::string(PrimitiveTypeName(shape_.element_type)) + " literal");
      return token == "true" ? 1.0 : 0.0;
    }
    const bool negative = !token.empty() && token[0] == '-';
    const std::string magnitude = negative ? token.substr(1) : token;
    double value = 0;
    if (magnitude == "inf") {
      value = std::numeric_limits<double>::infinity();
    } else if (magnitude == "nan") {
      value = std::numeric_limits<double>::quiet_NaN();
      if (lexer_.Peek() == '(') {  // a NaN payload: nan(0x7fc00001)
        while (!lexer_.AtEnd() && lexer_.Peek() != ')')
          lexer_.Advance();
        lexer_.Expect(')', "')' after the NaN payload");
      }
    } else {
      char* end = nullptr;
      value = token.empty() ? 0 : std::strtod(token.c_str(), &end);
      if (token.empty() || end != token.c_str() + token.size() || IsLetter(token[0]) ||
          (pred && value != 0 && value != 1)) {
        lexer_.FailAt(start, std::string(pred ? "true or false" : "a number") + " for the " +
                                 std::string(PrimitiveTypeName(shape_.element_type)) + " literal");
      }
      return value;
    }
    return negative ? -value : value;
  }

  Lexer& lexer_;
  const Shape& shape_;
  bool keep_values_;
};

// Skips to the ')' that closes constant( (not consumed), over nested groups.
void SkipBalanced(Lexer& lexer, size_t start) {
  int depth = 0;
  while (!lexer.AtEnd()) {
    const char c = lexer.Peek();
    if (c == ')' && depth == 0) return;
    if (c == '(' || c == '{' || c == '[') {
      if (++depth > kMaxNestingDepth)
        lexer.FailAt(lexer.offset(), "a literal nested at most 64 deep");
    } else if ((c == ')' || c == '}' || c == ']')) {
      --depth;
    }
    lexer.Advance();
  }
  lexer.FailAt(start, "')' to close the constant's literal (it runs to the end)");
}

bool IsElided(Lexer& lexer) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  if (lexer.Consume('{') && lexer.ConsumeText("...") && lexer.Consume('}')) return true;
  lexer.Seek(start);
  return false;
}

}  // namespace

void ParseLiteral(Lexer& lexer, const Shape& shape, Instruction& instruction) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  if (IsElided(lexer)) {
    instruction.literal_elided = true;
  } else if (!shape.IsArray()) {
    SkipBalanced(lexer, start);  // tuple and token literals: kept as text
  } else {
    int64_t elements = 0;
    try {
      elements = shape.ElementCount();
    } catch (const Error&) {
      lexer.FailAt(start, "a constant of a bounded shape (not " + shape.ToString() + ")");
    }
    LiteralReader reader(lexer, shape, elements <= kMaxDecodedLiteralElements);
    reader.ReadArray(0);
    instruction.literal_values = std::move(reader.values);
  }
  lexer.SkipSpace();
  instruction.literal_text = std::string(lexer.Slice(start, lexer.offset()));
  while (!instruction.literal_text.empty() && IsSpace(instruction.literal_text.back())) {
    instruction.literal_text.pop_back();
  }
  lexer.Expect(')', "')' to close the constant's literal");
}

}  // namespace tpusim::hlo::detail
