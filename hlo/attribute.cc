#include "hlo/attribute.h"

#include <array>
#include <memory>

#include "hlo/lexer.h"

namespace tpusim::hlo {

namespace {

bool EndsScalar(char c) {
  return c == '\0' || IsSpace(c) || c == ',' || c == '}' || c == ':';
}

// A bare token: runs to a space, ',', '}' or ':' outside any (), [] or {} group inside it.
AttrValue ParseScalar(Lexer& lexer, int depth) {
  AttrValue value;
  value.offset = lexer.offset();
  // The groups open inside the token: where each opens and the character that closes it.
  std::array<size_t, kMaxNestingDepth> opened{};
  std::array<char, kMaxNestingDepth> closers{};
  int nesting = 0;
  while (!lexer.AtEnd()) {
    const char c = lexer.Peek();
    if (nesting == 0 && (EndsScalar(c) || c == ')' || c == ']')) break;
    if (c == '"') {
      (void)lexer.ScanString();
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth + nesting + 1 > kMaxNestingDepth) {
        lexer.FailAt(lexer.offset(), "values nested at most 64 deep");
      }
      opened[static_cast<size_t>(nesting)] = lexer.offset();
      closers[static_cast<size_t>(nesting++)] = c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (c == ')' || c == ']' || c == '}') {
      const auto inner = static_cast<size_t>(nesting - 1);
      if (c != closers[inner]) {
        lexer.FailAt(lexer.offset(), std::string("'") + closers[inner] + "' to close the '" +
                                         lexer.Slice(opened[inner], opened[inner] + 1).front() +
                                         "' at " + lexer.Location(opened[inner]).ToString());
      }
      --nesting;
    }
    lexer.Advance();
  }
  if (lexer.offset() == value.offset) lexer.Fail("an attribute value");
  if (nesting > 0) {
    const auto inner = static_cast<size_t>(nesting - 1);
    lexer.FailAt(opened[inner],
                 std::string("'") + closers[inner] + "' to close this group (it runs to the end)");
  }
  value.text = std::string(lexer.Slice(value.offset, lexer.offset()));
  value.kind = value.text[0] == '[' ? AttrValue::Kind::kBracket : AttrValue::Kind::kScalar;
  value.value = value.text;
  return value;
}

// `key=value` when a name is directly followed by '=' (not '=='), else nothing consumed.
bool ScanItemKey(Lexer& lexer, std::string& key) {
  size_t length = 0;
  if (!(IsLetter(lexer.Peek()) || lexer.Peek() == '_')) return false;
  while (IsNameChar(lexer.Peek(length)))
    ++length;
  if (lexer.Peek(length) != '=' || lexer.Peek(length + 1) == '=') return false;
  key = std::string(lexer.Slice(lexer.offset(), lexer.offset() + length));
  lexer.Advance(length + 1);
  return true;
}

AttrValue ParseList(Lexer& lexer, int depth) {
  AttrValue list;
  list.kind = AttrValue::Kind::kList;
  list.offset = lexer.offset();
  if (depth >= kMaxNestingDepth) lexer.FailAt(list.offset, "values nested at most 64 deep");
  lexer.Advance();  // '{'
  while (true) {
    lexer.SkipSpace();
    if (lexer.Peek() == '}') break;
    if (lexer.AtEnd()) {
      lexer.Fail("'}' to close the list that opens at " + lexer.Location(list.offset).ToString());
    }
    std::string key;
    const size_t key_offset = lexer.offset();
    const bool keyed = ScanItemKey(lexer, key);
    AttrValue item = ParseAttrValue(lexer, depth + 1);
    if (!keyed && lexer.Consume(':')) {
      AttrValue pair;
      pair.kind = AttrValue::Kind::kPair;
      pair.offset = item.offset;
      pair.items.push_back(std::move(item));
      pair.items.push_back(ParseAttrValue(lexer, depth + 1));
      item = std::move(pair);
      item.text = std::string(lexer.Slice(item.offset, lexer.offset()));
    }
    item.key = std::move(key);
    if (keyed) item.key_offset = key_offset;
    list.items.push_back(std::move(item));
    lexer.SkipSpace();
    if (lexer.AtEnd()) {
      lexer.Fail("'}' to close the list that opens at " + lexer.Location(list.offset).ToString());
    }
    if (lexer.Peek() == ',') {
      lexer.Advance();
    } else if (lexer.Peek() == ')' || lexer.Peek() == ']') {
      lexer.Fail("',' or '}' in the list");
    }
  }
  lexer.Advance();  // '}'
  list.text = std::string(lexer.Slice(list.offset, lexer.offset()));
  return list;
}

}  // namespace

const AttrValue* AttrValue::Find(std::string_view item_key) const {
  for (const AttrValue& item : items) {
    if (item.key == item_key) return &item;
  }
  return nullptr;
}

void Attribute::Fail(const AttrValue& inner, std::string_view expected) const {
  FailExpected(At(inner), std::string(expected) + " in " + name);
}

AttrValue ParseAttrValue(Lexer& lexer, int depth) {
  lexer.SkipSpace();
  if (lexer.Peek() == '{') return ParseList(lexer, depth);
  if (lexer.Peek() == '"') {
    AttrValue value;
    value.kind = AttrValue::Kind::kString;
    value.offset = lexer.offset();
    value.value = lexer.ScanString();
    value.text = std::string(lexer.Slice(value.offset, lexer.offset()));
    return value;
  }
  return ParseScalar(lexer, depth);
}

Attribute ParseAttribute(std::string_view name, std::string_view value_text) {
  std::string label = "<";
  label += name;
  label += '>';
  auto source = std::make_shared<const SourceText>(std::move(label), std::string(value_text));
  Lexer lexer(source);
  Attribute attribute;
  attribute.name = std::string(name);
  attribute.location = {source, 0};
  attribute.value = ParseAttrValue(lexer);
  lexer.SkipSpace();
  if (!lexer.AtEnd()) lexer.Fail("the end of the " + std::string(name) + " value");
  return attribute;
}

}  // namespace tpusim::hlo
