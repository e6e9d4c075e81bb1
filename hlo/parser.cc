// The structure of a module: header, debug tables, computations, instructions. Names are
// resolved and the module checked afterwards (resolve.cc), so a syntax error is reported
// before any semantic one.
//
// Why this is tpusim's own code: `apt-cache search` finds no HLO text parser for Debian
// (nothing for xla, hlo, stablehlo, tensorflow or jaxlib; libmlir-* has no HLO dialect),
// and XLA's parser cannot be taken without most of XLA (parser.h, docs/hlo.md).

#include "hlo/parser.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "hlo/parse_state.h"
#include "hlo/shape_parser.h"

namespace tpusim::hlo {

namespace {

using detail::OperandRef;
using detail::ParsedComputation;
using detail::ParsedInstruction;

class Parser {
 public:
  explicit Parser(std::shared_ptr<const SourceText> source) : lexer_(source) {
    module_.file_name = source->file_name();
  }

  Module Run() {
    ParseHeader();
    while (true) {
      lexer_.SkipSpace();
      if (lexer_.AtEnd()) break;
      if (!ParseDebugTable()) ParseComputation();
    }
    if (module_.computations.empty())
      lexer_.Fail("a computation such as ENTRY %main () -> f32[] { ... }");
    detail::ResolveModule(module_, parsed_);
    return std::move(module_);
  }

 private:
  void ParseHeader() {
    if (!lexer_.ConsumeWord("HloModule"))
      lexer_.Fail("'HloModule' and the module's name at the start of the text");
    module_.name = std::string(lexer_.ExpectName("the module's name after HloModule"));
    while (lexer_.Consume(','))
      module_.header_attributes.push_back(
          ParseAttribute("a header attribute such as num_partitions=8"));
  }

  Attribute ParseAttribute(std::string_view what) {
    Attribute attribute;
    lexer_.SkipSpace();
    attribute.location = lexer_.Location();
    attribute.name = std::string(lexer_.ExpectName(what));
    lexer_.Expect('=', "'=' after the attribute name " + attribute.name);
    attribute.value = ParseAttrValue(lexer_);
    return attribute;
  }

  // FileNames / FunctionNames / FileLocations / StackFrames (or any name that is followed by
  // a row `ID VALUE`): kept as rows of text.
  bool ParseDebugTable() {
    const size_t start = lexer_.offset();
    if (lexer_.Peek() == '%') return false;
    const std::string_view name = lexer_.ScanName();
    const bool known = name == "FileNames" || name == "FunctionNames" || name == "FileLocations" ||
                       name == "StackFrames";
    lexer_.SkipSpace();
    const bool is_table =
        known ? lexer_.Peek() != '(' && lexer_.Peek() != '{' : IsDigit(lexer_.Peek());
    if (name.empty() || name == "ENTRY" || !is_table) {
      lexer_.Seek(start);
      return false;
    }
    DebugTable& table = module_.debug_tables.emplace_back();
    table.name = std::string(name);
    int64_t id = 0;
    while (lexer_.ScanInt(id)) {
      const AttrValue value = ParseAttrValue(lexer_);
      table.rows.emplace_back(id, value.text);
      lexer_.SkipSpace();
    }
    return true;
  }

  void ParseComputation() {
    ParsedComputation& parsed = parsed_.emplace_back();
    if (lexer_.ConsumeWord("ENTRY")) parsed.entry_offset = lexer_.offset() - 5;
    Computation& computation = module_.computations.emplace_back();
    lexer_.SkipSpace();
    computation.location = lexer_.Location();
    computation.name = std::string(lexer_.ExpectName("a computation name such as %main or ENTRY"));
    if (lexer_.Consume('(')) ParseSignature(computation);
    // `, execution_thread="host"` and the like, between the signature and the body.
    while (lexer_.Consume(',')) {
      computation.attributes.push_back(
          ParseAttribute("a computation attribute such as execution_thread"));
    }
    lexer_.Expect('{', "'{' to open the body of computation " + computation.name);
    while (!lexer_.Consume('}'))
      ParseInstruction(computation, parsed);
  }

  void ParseSignature(Computation& computation) {
    if (!lexer_.Consume(')')) {
      do {
        std::string name(
            lexer_.ExpectName("a parameter name in the signature of " + computation.name));
        lexer_.Expect(':', "':' and the shape of parameter " + name);
        computation.signature_parameters.emplace_back(std::move(name), ParseShape(lexer_));
      } while (lexer_.Consume(','));
      lexer_.Expect(')', "',' or ')' in the signature of " + computation.name);
    }
    if (!lexer_.ConsumeText("->")) lexer_.Fail("'->' and the result shape of " + computation.name);
    computation.signature_result = ParseShape(lexer_);
  }

  void ParseInstruction(Computation& computation, ParsedComputation& parsed) {
    ParsedInstruction& parsed_instruction = parsed.instructions.emplace_back();
    Instruction& instruction = computation.instructions.emplace_back();
    lexer_.SkipSpace();
    if (lexer_.ConsumeWord("ROOT")) {
      parsed.root_offsets.push_back(lexer_.offset() - 4);
      instruction.is_root = true;
      lexer_.SkipSpace();
    }
    instruction.location = lexer_.Location();
    instruction.name = std::string(lexer_.ExpectName(
        "an instruction such as %x = f32[] add(%a, %b), or '}' to end computation " +
        computation.name));
    lexer_.Expect('=', "'=' after the instruction name " + instruction.name);
    instruction.shape = ParseShape(lexer_);
    lexer_.SkipSpace();
    parsed_instruction.opcode_offset = lexer_.offset();
    instruction.opcode = ScanOpcode();
    lexer_.Expect('(', "'(' and the operands of " + instruction.opcode);
    if (instruction.opcode == "parameter") {
      lexer_.SkipSpace();
      const size_t number_at = lexer_.offset();
      instruction.parameter_number = lexer_.ExpectInt("the parameter number in parameter(N)");
      if (instruction.parameter_number < 0) {
        lexer_.FailAt(number_at, "a parameter number of at least 0");
      }
      lexer_.Expect(')', "')' after the parameter number");
    } else if (instruction.opcode == "constant") {
      detail::ParseLiteral(lexer_, instruction.shape, instruction);
    } else if (!lexer_.Consume(')')) {
      do {
        ParseOperand(instruction, parsed_instruction);
      } while (lexer_.Consume(','));
      lexer_.Expect(')', "',' or ')' in the operands of " + instruction.name);
    }
    while (lexer_.Consume(','))
      instruction.attributes.push_back(ParseAttribute("an attribute name such as dimensions"));
  }

  std::string ScanOpcode() {
    const size_t start = lexer_.offset();
    size_t length = 0;
    while (IsLetter(lexer_.Peek(length)) ||
           (length > 0 && (IsDigit(lexer_.Peek(length)) || lexer_.Peek(length) == '-' ||
                           lexer_.Peek(length) == '_'))) {
      ++length;
    }
    if (length == 0) lexer_.Fail("an opcode such as add or all-gather after the shape");
    lexer_.Advance(length);
    return std::string(lexer_.Slice(start, start + length));
  }

  void ParseOperand(Instruction& instruction, ParsedInstruction& parsed) {
    lexer_.SkipSpace();
    OperandRef& ref = parsed.operands.emplace_back();
    ref.offset = lexer_.offset();
    if (StartsShape(lexer_)) ref.shape = ParseShape(lexer_);
    instruction.operand_names.emplace_back(
        lexer_.ExpectName("an operand name such as %x (or a shape and a name: f32[2]{0} %x)"));
  }

  Lexer lexer_;
  Module module_;
  std::vector<ParsedComputation> parsed_;
};

}  // namespace

Module ParseModule(std::string_view text, const std::string& file_name) {
  Parser parser(std::make_shared<const SourceText>(file_name, std::string(text)));
  return parser.Run();
}

Module ParseModuleFile(const std::string& path) {
  std::error_code error;
  std::ifstream file(path, std::ios::binary);
  if (!file || std::filesystem::is_directory(path, error)) {
    throw HloError({}, "Cannot read the HLO module file " + path +
                           ": it does not exist or is not readable. Give the path of a text file "
                           "that holds what compiled.as_text() prints.");
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw HloError({}, "Cannot read the HLO module file " + path + ".");
  return ParseModule(text.str(), path);
}

}  // namespace tpusim::hlo
