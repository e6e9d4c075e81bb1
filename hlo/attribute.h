#pragma once

// Attributes as a generic tree: every `name=value` after an instruction's operands (and in
// the module header) is kept in order, whatever its name, with its source location. Typed
// decoders (attribute_decoders.h, replica_groups.h, sharding.h) read the tree, or re-read
// the value's exact source text, and report errors at the value's position in the file.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/source.h"

namespace tpusim::hlo {

class Lexer;

struct AttrValue {
  enum class Kind {
    kScalar,   // a bare token: 3, kLoop, %add, 0_0x1_1, b01f_01io->b01f, (0, {}, may-alias)
    kBracket,  // a token that opens with '[': [0:2], [2,4]<=[8], [3,10]<=[6,5]T(1,0)
    kString,   // "..." (value holds it unescaped)
    kList,     // {a, b c, key=value, ...}: items separated by commas or spaces
    kPair,     // `left: right` inside a list, as in {0}: (1, {}) or "key":{...}
  };

  Kind kind = Kind::kScalar;
  std::string text;              // the exact source text of the value
  std::string value;             // kString: the decoded string; kScalar and kBracket: the text
  std::string key;               // the name of a `key=value` item inside a list, else empty
  size_t key_offset = 0;         // where that name starts
  std::vector<AttrValue> items;  // kList: the items; kPair: {left, right}
  size_t offset = 0;             // where the value starts in the source

  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsList() const { return kind == Kind::kList; }
  bool IsString() const { return kind == Kind::kString; }
  // The item of a list with this key, or nullptr.
  const AttrValue* Find(std::string_view item_key) const;
};

struct Attribute {
  std::string name;
  AttrValue value;
  SourceLocation location;  // of the name

  // Where a value (this attribute's or one inside it) starts.
  SourceLocation At(const AttrValue& inner) const { return {location.source, inner.offset}; }
  SourceLocation ValueLocation() const { return At(value); }
  // The value's text as written ("{1,0}", "\"x\"", "kLoop").
  const std::string& text() const { return value.text; }
  // Throws HloError at `inner` saying "expected EXPECTED in NAME, found 'TEXT'.".
  [[noreturn]] void Fail(const AttrValue& inner, std::string_view expected) const;
};

// Reads one value at the lexer's position: a string, a {...} list or a token (which may
// hold balanced (), [] and {} groups). Nesting is bounded by kMaxNestingDepth.
AttrValue ParseAttrValue(Lexer& lexer, int depth = 0);

// An attribute read from `value_text` alone, named `name`: for tools and tests that decode
// a value without a module (locations are in a source named "<NAME>").
Attribute ParseAttribute(std::string_view name, std::string_view value_text);

}  // namespace tpusim::hlo
