#include "hlo/shape_parser.h"

#include <string>

namespace tpusim::hlo {

namespace {

constexpr int kMaxRank = 64;

std::string ExpectedShape() {
  return "a shape such as f32[2,3]{1,0}, (f32[], s32[]) or token[] (element types: " +
         std::string(PrimitiveTypeNames()) + ")";
}

// The details after ':' in a layout: "T(8,128)(2,1)S(1)". Reads up to the layout's closing
// '}' (not consumed), skipping parenthesised groups that may hold braces of their own.
void ParseLayoutDetails(Lexer& lexer, Layout& layout) {
  const size_t start = lexer.offset();
  int depth = 0;
  while (!lexer.AtEnd() && !(depth == 0 && lexer.Peek() == '}')) {
    const char c = lexer.Peek();
    if (c == '(' || c == '{' || c == '[') {
      if (++depth > kMaxNestingDepth) lexer.FailAt(lexer.offset(), "at most 64 nested groups");
    } else if ((c == ')' || c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (c == '\n') {
      lexer.FailAt(lexer.offset(), "'}' to close the layout");
    }
    lexer.Advance();
  }
  layout.details = std::string(lexer.Slice(start, lexer.offset()));
  // Each item is a tag (letters, '#' or '*') followed by parenthesised groups; T has one
  // group per tile, S holds the memory space, E the packed element size.
  Lexer items(lexer.source(), start, lexer.offset());
  while (!items.AtEnd()) {
    const size_t tag_start = items.offset();
    while (!items.AtEnd() && items.Peek() != '(')
      items.Advance();
    const std::string_view tag = items.Slice(tag_start, items.offset());
    const size_t groups_start = items.offset();
    while (items.Peek() == '(') {
      int nesting = 0;
      do {
        if (items.Peek() == '(') ++nesting;
        if (items.Peek() == ')') --nesting;
        items.Advance();
      } while (!items.AtEnd() && nesting > 0);
    }
    const std::string_view groups = items.Slice(groups_start, items.offset());
    if (tag == "T") {
      layout.tiles = std::string(items.Slice(tag_start, items.offset()));  // "T(8,128)(2,1)"
    } else if (tag == "S" || tag == "E") {
      Lexer number(lexer.source(), groups_start + 1, items.offset());
      const int64_t value = number.ExpectInt(tag == "S" ? "a memory space number in S(...)"
                                                        : "an element size in bits in E(...)");
      if (number.Peek() != ')') number.Fail("')'");
      (tag == "S" ? layout.memory_space : layout.element_size_in_bits) = value;
    }
    if (groups.empty()) items.Advance();  // a tag without groups: keep going
  }
}

Layout ParseLayout(Lexer& lexer, int rank) {
  const size_t start = lexer.offset();
  lexer.Advance();  // '{'
  Layout layout;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  lexer.SkipSpace();
  while (lexer.Peek() != '}' && lexer.Peek() != ':') {
    const size_t at = lexer.offset();
    const int64_t dimension = lexer.ExpectInt("a dimension number in the layout");
    if (dimension < 0 || dimension >= rank || seen[static_cast<size_t>(dimension)]) {
      lexer.FailAt(at, "a layout listing each of the shape's " + std::to_string(rank) +
                           " dimension numbers once (minor to major, e.g. {1,0})");
    }
    seen[static_cast<size_t>(dimension)] = true;
    layout.minor_to_major.push_back(dimension);
    if (!lexer.Consume(',')) break;
    lexer.SkipSpace();
  }
  lexer.SkipSpace();
  if (lexer.Peek() == ':') {
    lexer.Advance();
    ParseLayoutDetails(lexer, layout);
  }
  if (!lexer.Consume('}')) lexer.Fail("',', ':' or '}' in the layout");
  if (!layout.minor_to_major.empty() && layout.minor_to_major.size() != seen.size()) {
    lexer.FailAt(start, "a layout listing each of the shape's " + std::to_string(rank) +
                            " dimension numbers once (minor to major, e.g. {1,0})");
  }
  return layout;
}

// A '{' that starts a layout: right after ']', or after spaces when a dimension number or
// ':' follows (a computation's body also opens with '{' after its result shape).
bool StartsLayout(Lexer& lexer) {
  if (lexer.Peek() == '{') return true;
  const size_t start = lexer.offset();
  lexer.SkipSpace();
  if (lexer.Peek() == '{') {
    size_t ahead = 1;
    while (IsSpace(lexer.Peek(ahead)))
      ++ahead;
    const char next = lexer.Peek(ahead);
    if (IsDigit(next) || next == ':') return true;
  }
  lexer.Seek(start);
  return false;
}

Shape ParseArrayShape(Lexer& lexer, PrimitiveType type, size_t start) {
  Shape shape = Shape::Array(type, {});
  lexer.Advance();  // '['
  int64_t elements = 1;
  lexer.SkipSpace();
  if (lexer.Peek() != ']') {
    while (true) {
      bool dynamic = false;
      int64_t size = 0;
      if (lexer.Consume('?')) {
        dynamic = true;
        size = kUnboundedSize;
      } else {
        dynamic = lexer.ConsumeText("<=");
        const size_t at = lexer.offset();
        size = lexer.ExpectInt("a dimension size, '<=' and a bound, or '?'");
        if (size < 0) lexer.FailAt(at, "a dimension size of at least 0");
        if (__builtin_mul_overflow(elements, size, &elements)) {
          lexer.FailAt(start, "a shape of fewer than 2^63 elements");
        }
      }
      if (shape.dimensions.size() == kMaxRank)
        lexer.FailAt(start, "a shape of at most 64 dimensions");
      shape.dimensions.push_back(size);
      shape.dynamic_dimensions.push_back(dynamic);
      if (!lexer.Consume(',')) break;
    }
  }
  lexer.Expect(']',
               "',' or ']' in the dimensions of " + std::string(PrimitiveTypeName(type)) + "[...]");
  if (StartsLayout(lexer)) shape.layout = ParseLayout(lexer, shape.rank());
  return shape;
}

}  // namespace

bool StartsShape(Lexer& lexer) {
  lexer.SkipSpace();
  if (lexer.Peek() == '(') return true;
  size_t length = 0;
  while (IsLetter(lexer.Peek(length)) || IsDigit(lexer.Peek(length)))
    ++length;
  if (length == 0 || lexer.Peek(length) != '[') return false;
  const std::string_view word = lexer.Slice(lexer.offset(), lexer.offset() + length);
  return word == "token" || PrimitiveTypeFromName(word).has_value();
}

Shape ParseShape(Lexer& lexer, int depth) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  if (lexer.Peek() == '(') {
    if (depth >= kMaxNestingDepth) lexer.FailAt(start, "tuple shapes nested at most 64 deep");
    lexer.Advance();
    Shape tuple = Shape::Tuple({});
    if (!lexer.Consume(')')) {
      do {
        tuple.tuple_shapes.push_back(ParseShape(lexer, depth + 1));
      } while (lexer.Consume(','));
      lexer.Expect(')', "',' or ')' in the tuple shape");
    }
    return tuple;
  }
  size_t length = 0;
  while (IsLetter(lexer.Peek(length)) || IsDigit(lexer.Peek(length)))
    ++length;
  const std::string_view word = lexer.Slice(start, start + length);
  if (word == "token" && lexer.Peek(length) == '[') {
    lexer.Advance(length + 1);
    lexer.Expect(']', "']' after token[");
    return Shape::Token();
  }
  const std::optional<PrimitiveType> type = PrimitiveTypeFromName(word);
  if (!type) lexer.FailAt(start, ExpectedShape());
  lexer.Advance(length);
  if (lexer.Peek() != '[') lexer.Fail("'[' after the element type " + std::string(word));
  return ParseArrayShape(lexer, *type, start);
}

}  // namespace tpusim::hlo
