#pragma once

// What the attribute decoders share (internal to hlo/): a lexer over one value's source
// text, and reading an integer out of a scalar value.

#include <cstdint>
#include <string_view>

#include "hlo/attribute.h"
#include "hlo/lexer.h"

namespace tpusim::hlo::detail {

// A lexer over exactly the source text of `value`, with locations in the original file.
inline Lexer ValueLexer(const Attribute& attribute, const AttrValue& value) {
  return Lexer(attribute.location.source, value.offset, value.offset + value.text.size());
}

// Fails at the lexer's position with "expected WHAT in NAME".
[[noreturn]] inline void FailIn(Lexer& lexer, const Attribute& attribute, std::string_view what) {
  lexer.Fail(std::string(what) + " in " + attribute.name);
}

// The integer a scalar value spells, or "expected WHAT in NAME".
int64_t IntOf(const Attribute& attribute, const AttrValue& value, std::string_view what);

// The items of a list value, or "expected WHAT in NAME" when it is not a list.
const std::vector<AttrValue>& ListItems(const Attribute& attribute, const AttrValue& value,
                                        std::string_view what);

// Reads `{1,2}` (a shape index or an int list) at the lexer's position.
std::vector<int64_t> ReadBracedInts(Lexer& lexer, const Attribute& attribute);

}  // namespace tpusim::hlo::detail

namespace tpusim::hlo {
struct IotaTileAssignment;
}

namespace tpusim::hlo::detail {

// Reads `[dims]<=[reshape_dims]` and an optional `T(permutation)` at the lexer's position,
// checking that the element counts agree, the permutation is one, and the count is at most
// kMaxExpandedDevices.
IotaTileAssignment ReadIota(Lexer& lexer, const Attribute& attribute);

// Reads `[a,b,...]` of positive integers.
std::vector<int64_t> ReadBracketedDims(Lexer& lexer, const Attribute& attribute,
                                       std::string_view what);

}  // namespace tpusim::hlo::detail
