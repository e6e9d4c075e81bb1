#pragma once

// Reading shapes and layouts from HLO text (internal to hlo/: the parser and the decoders
// of shape-valued attributes such as entry_computation_layout use it).

#include "hlo/lexer.h"
#include "hlo/shape.h"

namespace tpusim::hlo {

// Reads a shape after SkipSpace: `f32[2,32]{1,0}`, `(f32[], s32[])`, `token[]`, `()`.
// `depth` counts the tuples around it (bounded by kMaxNestingDepth).
Shape ParseShape(Lexer& lexer, int depth = 0);

// True when a shape starts at the lexer's position (after SkipSpace): '(' or an element
// type name or "token" directly followed by '['.
bool StartsShape(Lexer& lexer);

}  // namespace tpusim::hlo
