// The decoders of the aliasing attributes and of the header's entry_computation_layout.

#include "hlo/attribute_decoders.h"
#include "hlo/decoder_support.h"
#include "hlo/shape_parser.h"

namespace tpusim::hlo {

using detail::FailIn;
using detail::ReadBracedInts;
using detail::ValueLexer;

namespace {

// The items `{index}: (...)` of an aliasing list; calls read(output_index, lexer) with a
// lexer over the parenthesised right side, positioned after its '('.
template <typename Read>
void ForEachAlias(const Attribute& attribute, const char* example, Read read) {
  for (const AttrValue& item : detail::ListItems(attribute, attribute.value, example)) {
    if (item.kind != AttrValue::Kind::kPair || !item.items[0].IsList()) {
      attribute.Fail(item, std::string("an alias such as ") + example);
    }
    Lexer left = ValueLexer(attribute, item.items[0]);
    const ShapeIndex output_index = ReadBracedInts(left, attribute);
    Lexer right = ValueLexer(attribute, item.items[1]);
    if (!right.Consume('(')) FailIn(right, attribute, "'(' after the output index and ':'");
    read(output_index, right);
    if (!right.Consume(')')) FailIn(right, attribute, "')' to close the alias");
    right.SkipSpace();
    if (!right.AtEnd()) FailIn(right, attribute, "',' or '}' after the alias");
  }
}

int64_t ReadNumber(Lexer& lexer, const Attribute& attribute, std::string_view what) {
  int64_t value = 0;
  if (!lexer.ScanInt(value)) FailIn(lexer, attribute, what);
  return value;
}

}  // namespace

std::vector<OperandAlias> DecodeOutputToOperandAliasing(const Attribute& attribute) {
  std::vector<OperandAlias> aliases;
  ForEachAlias(attribute, "{{0}: (1, {})}", [&](const ShapeIndex& output, Lexer& lexer) {
    OperandAlias alias;
    alias.output_index = output;
    alias.operand = ReadNumber(lexer, attribute, "an operand number");
    if (!lexer.Consume(',')) FailIn(lexer, attribute, "',' and the operand's shape index");
    alias.operand_index = ReadBracedInts(lexer, attribute);
    aliases.push_back(alias);
  });
  return aliases;
}

std::vector<InputOutputAlias> DecodeInputOutputAlias(const Attribute& attribute) {
  std::vector<InputOutputAlias> aliases;
  ForEachAlias(attribute, "{ {0}: (1, {}, may-alias) }",
               [&](const ShapeIndex& output, Lexer& lexer) {
                 InputOutputAlias alias;
                 alias.output_index = output;
                 alias.parameter_number = ReadNumber(lexer, attribute, "a parameter number");
                 if (!lexer.Consume(','))
                   FailIn(lexer, attribute, "',' and the parameter's shape index");
                 alias.parameter_index = ReadBracedInts(lexer, attribute);
                 if (lexer.Consume(',')) {
                   if (lexer.ConsumeWord("must-alias")) {
                     alias.must_alias = true;
                   } else if (!lexer.ConsumeWord("may-alias")) {
                     FailIn(lexer, attribute, "may-alias or must-alias");
                   }
                 }
                 aliases.push_back(alias);
               });
  return aliases;
}

ProgramShape DecodeComputationLayout(const Attribute& attribute) {
  Lexer lexer = ValueLexer(attribute, attribute.value);
  if (!lexer.Consume('{'))
    FailIn(lexer, attribute, "'{' to open the layout, as in {(f32[2]{0})->f32[2]{0}}");
  if (!lexer.Consume('(')) FailIn(lexer, attribute, "'(' to open the parameter shapes");
  ProgramShape program;
  if (!lexer.Consume(')')) {
    do {
      program.parameters.push_back(ParseShape(lexer));
    } while (lexer.Consume(','));
    if (!lexer.Consume(')')) FailIn(lexer, attribute, "',' or ')' after a parameter shape");
  }
  if (!lexer.ConsumeText("->")) FailIn(lexer, attribute, "'->' and the result shape");
  program.result = ParseShape(lexer);
  if (!lexer.Consume('}')) FailIn(lexer, attribute, "'}' after the result shape");
  return program;
}

}  // namespace tpusim::hlo
