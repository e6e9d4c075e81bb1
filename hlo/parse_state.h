#pragma once

// What the parser records beyond the Module for the semantic checks that follow it
// (internal to hlo/: parser.cc fills it, resolve.cc reads it).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hlo/lexer.h"
#include "hlo/module.h"

namespace tpusim::hlo::detail {

struct OperandRef {
  size_t offset = 0;           // where the operand starts (its shape, or its name)
  std::optional<Shape> shape;  // when written with its type: f32[2]{0} %x
};

struct ParsedInstruction {
  std::vector<OperandRef> operands;
  size_t opcode_offset = 0;
};

struct ParsedComputation {
  std::vector<ParsedInstruction> instructions;
  std::vector<size_t> root_offsets;    // each ROOT keyword, in order
  std::optional<size_t> entry_offset;  // the ENTRY keyword
};

// Reads constant(...)'s literal after the '(' up to and including the ')', checking its
// nesting against `shape`, into the instruction's literal fields.
void ParseLiteral(Lexer& lexer, const Shape& shape, Instruction& instruction);

// Resolves names to indices, decodes the common attributes and header fields, and checks
// the module (see resolve.cc). Throws HloError on the first problem.
void ResolveModule(Module& module, const std::vector<ParsedComputation>& parsed);

}  // namespace tpusim::hlo::detail
