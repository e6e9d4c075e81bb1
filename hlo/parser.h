#pragma once

// tpusim's reader of XLA's HLO text: what `jax.jit(f).lower(*a).compile().as_text()` and
// XLA's HloModule::ToString print. docs/hlo.md lists the dialect it accepts, what it
// decodes, and its error messages.
//
// No maintained HLO text parser is packaged for Debian (checked with `apt-cache search`
// for xla, hlo, stablehlo, tensorflow and jaxlib: none; only upstream MLIR, which has no
// HLO text reader), and XLA's own parser (xla/hlo/parser/hlo_parser.cc) would bring all of
// XLA with it. So tpusim has its own, written for this dialect: a lexer (lexer.h), shapes
// (shape_parser.h), attributes as a generic tree (attribute.h) with typed decoders, and
// this structure parser followed by the semantic checks (resolve.cc).

#include <string>
#include <string_view>

#include "hlo/module.h"

namespace tpusim::hlo {

// Parses one module. `file_name` names the text in error messages
// ("FILE:LINE:COLUMN: expected X, found 'TEXT'."). Throws HloError (a tpusim::Error of
// kind kInvalidArgument) on the first syntax or semantic error.
Module ParseModule(std::string_view text, const std::string& file_name);

// Reads and parses the file at `path`; a file that cannot be read is an HloError naming
// the path.
Module ParseModuleFile(const std::string& path);

}  // namespace tpusim::hlo
