// Every way a text can fail to be a module: the error names the file, line and column, what
// was expected and what was found, quotes the line with a caret, and never crashes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"
#include "tests/hlo/hlo_test_support.h"

namespace tpusim::hlo {
namespace {

using testing::Entry;
using ::testing::HasSubstr;
using testing::ParseFailure;

// Parsing `text` fails at line:column with a sentence containing `expected`.
void ExpectError(const std::string& text, int line, int column, const std::string& expected) {
  const HloError error = ParseFailure(text);
  EXPECT_EQ(error.file_name(), "test.hlo");
  EXPECT_EQ(error.line(), line) << error.what();
  EXPECT_EQ(error.column(), column) << error.what();
  EXPECT_THAT(error.sentence(), HasSubstr(expected)) << error.what();
  EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
}

TEST(HloParserErrors, MessageHasLocationSentenceQuotedLineAndCaret) {
  const HloError error = ParseFailure("HloModule m\n\nENTRY %main {\n  %x = f32[2] negate(%y\n}\n");
  EXPECT_STREQ(error.what(),
               "test.hlo:5:1: expected ',' or ')' in the operands of x, found '}'.\n"
               "}\n"
               "^");
  const HloError indented = ParseFailure(Entry("  %x = f31[2] parameter(0)"));
  EXPECT_THAT(indented.what(), HasSubstr("\n  %x = f31[2] parameter(0)\n       ^"));
}

TEST(HloParserErrors, HeaderAndStructure) {
  ExpectError(
      "Module m\n", 1, 1,
      "expected 'HloModule' and the module's name at the start of the text, found 'Module'.");
  ExpectError("HloModule , x=1\n", 1, 11, "expected the module's name after HloModule, found ','.");
  ExpectError("HloModule m, num_partitions 8\n", 1, 29,
              "expected '=' after the attribute name num_partitions, found '8'.");
  ExpectError("HloModule m\n", 2, 1,
              "expected a computation such as ENTRY %main () -> f32[] { ... }, found end of file.");
  ExpectError("HloModule m\nENTRY %main (p: f32[]) f32[] {\n", 2, 24,
              "expected '->' and the result shape of main, found 'f32'.");
  ExpectError("HloModule m\nENTRY %main () -> f32[] [\n", 2, 25,
              "expected '{' to open the body of computation main, found '['.");
  ExpectError("HloModule m\nENTRY 12 {\n", 2, 7,
              "expected a computation name such as %main or ENTRY, found '12'.");
}

TEST(HloParserErrors, Instructions) {
  ExpectError(Entry("  %x f32[] parameter(0)"), 4, 6,
              "expected '=' after the instruction name x, found 'f32'.");
  ExpectError(Entry("  %x = f31[2] parameter(0)"), 4, 8, "expected a shape such as f32[2,3]{1,0}");
  ExpectError(Entry("  %x = f32[2 parameter(0)"), 4, 14,
              "expected ',' or ']' in the dimensions of f32[...], found 'parameter'.");
  ExpectError(Entry("  %x = f32[2,2]{2,0} parameter(0)"), 4, 17,
              "expected a layout listing each of the shape's 2 dimension numbers once");
  ExpectError(Entry("  %x = f32[2,2]{0} parameter(0)"), 4, 16,
              "expected a layout listing each of the shape's 2 dimension numbers once");
  ExpectError(Entry("  %x = f32[2] (0)"), 4, 15,
              "expected an opcode such as add or all-gather after the shape, found '('.");
  ExpectError(Entry("  %x = f32[2] negate %y"), 4, 22,
              "expected '(' and the operands of negate, found '%y'.");
  ExpectError(Entry("  %x = f32[2] negate(3)"), 4, 22, "expected an operand name such as %x");
  ExpectError(Entry("  %x = f32[] parameter(p)"), 4, 24,
              "expected the parameter number in parameter(N), found 'p'.");
  ExpectError(Entry("  %x = f32[] parameter(99999999999999999999)"), 4, 24,
              "expected an integer between -2^63 and 2^63-1");
  ExpectError(Entry("  %x = f32[] parameter(0), sharding"), 5, 1,
              "expected '=' after the attribute name sharding, found '}'.");
  ExpectError(Entry("  %x = f32[] parameter(0), metadata={op_name=\"x}"), 4, 46,
              "expected a '\"' to close this string (it runs to the end)");
  ExpectError(Entry("  %x = f32[] parameter(0) /* never closed"), 4, 27,
              "expected a comment that starts with '/*' to end with '*/'");
  // The body's '}' closes the list, so the text ends where the next instruction should be.
  ExpectError(Entry("  %x = f32[] parameter(0), a={b=1"), 6, 1,
              "or '}' to end computation main, found end of file.");
  ExpectError("HloModule m\nENTRY %e {\n  %x = f32[] parameter(0), a={b=1", 3, 34,
              "expected '}' to close the list that opens at test.hlo:3:30, found end of file.");
}

TEST(HloParserErrors, NestingIsBounded) {
  std::string deep_list;
  for (int i = 0; i < 100; ++i)
    deep_list += "{";
  ExpectError(Entry("  %x = f32[] parameter(0), a=" + deep_list), 4, 94,
              "expected values nested at most 64 deep");
  std::string deep_tuple;
  for (int i = 0; i < 100; ++i)
    deep_tuple += "(";
  ExpectError(Entry("  %x = " + deep_tuple), 4, 72, "expected tuple shapes nested at most 64 deep");
  std::string deep_scalar = "[";
  for (int i = 0; i < 100; ++i)
    deep_scalar += "(";
  ExpectError(Entry("  %x = f32[] parameter(0), a=" + deep_scalar), 4, 94,
              "expected values nested at most 64 deep");
}

TEST(HloParserErrors, Literals) {
  ExpectError(Entry("  %c = f32[3] constant({1, 2})"), 4, 29,
              "expected ',' and 1 more entries of dimension 0 (size 3), found '}'.");
  ExpectError(Entry("  %c = f32[2] constant({1, 2, 3})"), 4, 29,
              "expected '}' after the 2 entries of dimension 0 of the f32[2] literal, found ','.");
  ExpectError(Entry("  %c = f32[2,1] constant({1, 2})"), 4, 27,
              "expected '{' to open dimension 1 of the f32[2,1] literal, found '1'.");
  ExpectError(Entry("  %c = f32[] constant(one)"), 4, 23,
              "expected a number for the f32 literal, found 'one'.");
  ExpectError(Entry("  %c = pred[] constant(2)"), 4, 24,
              "expected true or false for the pred literal, found '2'.");
  ExpectError(Entry("  %c = s32[] constant(true)"), 4, 23,
              "expected a number for the s32 literal, found 'true'.");
}

TEST(HloParserErrors, OperandNames) {
  ExpectError(Entry("  ROOT %x = f32[] negate(%nowhere)"), 4, 26,
              "The operand %nowhere of %x is not defined anywhere in the module; define it in "
              "computation %main");
  ExpectError(
      "HloModule m\n%f {\n  ROOT %p = f32[] parameter(0)\n}\nENTRY %main {\n  ROOT %x = f32[] "
      "negate(%p)\n}\n",
      6, 26,
      "The operand %p of %x is not defined in computation %main; it is defined in computation %f "
      "(test.hlo:3:8)");
  ExpectError(Entry("  %x = f32[] negate(%y)\n  ROOT %y = f32[] parameter(0)"), 4, 21,
              "The operand %y of %x is used before its definition (test.hlo:5:8)");
  ExpectError(
      Entry("  %p = f32[2]{0} parameter(0)\n  ROOT %x = f32[2] negate(f32[3] %p)"), 5, 27,
      "The operand %p of %x is written as f32[3], but %p is defined as f32[2] (test.hlo:4:3).");
  ExpectError(Entry("  %p = f32[] parameter(0)\n  ROOT %p = f32[] negate(%p)"), 5, 8,
              "The instruction name %p is already defined at test.hlo:4:3 in computation %main; "
              "names must be unique.");
  ExpectError(
      Entry("  %p = f32[] parameter(0)\n  ROOT %x = f32[] negate(%p), control-predecessors={%q}"),
      5, 52, "The control predecessor %q of %x is not an instruction of computation %main.");
}

TEST(HloParserErrors, ComputationReferences) {
  ExpectError(Entry("  %p = f32[8] parameter(0)\n  ROOT %r = f32[8] all-reduce(%p), to_apply=%sum"),
              5, 45,
              "The to_apply of %r names computation %sum, which this module does not define (it "
              "defines %main).");
  ExpectError(
      "HloModule m\nENTRY %main {\n  %p = f32[] parameter(0)\n  ROOT %c = f32[] call(%p), "
      "to_apply=%later\n}\n"
      "%later {\n  ROOT %q = f32[] parameter(0)\n}\n",
      4, 38,
      "names computation %later, which is defined later (test.hlo:6:1); a computation must come "
      "before");
  ExpectError(Entry("  ROOT %c = f32[] call(), to_apply=%main"), 4, 36,
              "its own computation; HLO computations cannot recurse.");
  ExpectError(
      "HloModule m\n%a {\n  ROOT %x = f32[] constant(0)\n}\n%a {\n  ROOT %y = f32[] "
      "constant(0)\n}\n",
      5, 1,
      "A computation named %a is already defined at test.hlo:2:1; each computation needs its own "
      "name.");
  ExpectError(
      "HloModule m\nENTRY %a {\n  ROOT %x = f32[] constant(0)\n}\nENTRY %b {\n  ROOT %y = f32[] "
      "constant(0)\n}\n",
      5, 1, "A second ENTRY computation: %a is already the entry; a module has one ENTRY.");
  ExpectError(Entry("  ROOT %x = f32[] constant(0)\n  ROOT %y = f32[] constant(1)"), 5, 3,
              "A second ROOT in computation %main; a computation has one root instruction.");
  ExpectError("HloModule m\nENTRY %main {\n}\n", 2, 7,
              "The computation %main has no instructions; it needs at least a ROOT.");
}

TEST(HloParserErrors, TuplesAndGetTupleElement) {
  const std::string tuple = "  %t = (f32[], s32[]) parameter(0)\n";
  ExpectError(Entry(tuple + "  ROOT %g = f32[] get-tuple-element(%t), index=2"), 5, 48,
              "The get-tuple-element %g takes element 2 of %t, whose shape (f32[], s32[]) has 2 "
              "elements (indices 0 to 1).");
  ExpectError(Entry(tuple + "  ROOT %g = f32[] get-tuple-element(%t)"), 5, 8,
              "The get-tuple-element %g has no index=N attribute.");
  ExpectError(Entry(tuple + "  ROOT %g = f32[] get-tuple-element(%t), index=1"), 5, 8,
              "The get-tuple-element %g has shape f32[], but element 1 of %t is s32[].");
  ExpectError(Entry("  %p = f32[] parameter(0)\n  ROOT %g = f32[] get-tuple-element(%p), index=0"),
              5, 8, "The get-tuple-element %g reads %p, whose shape f32[] is not a tuple.");
  ExpectError(Entry("  %p = f32[] parameter(0)\n  ROOT %t = (f32[], f32[]) tuple(%p)"), 5, 8,
              "The tuple %t has 1 operands, but its shape (f32[], f32[]) has 2 elements.");
  ExpectError(Entry("  %p = f32[] parameter(0)\n  ROOT %t = (s32[]) tuple(%p)"), 5, 27,
              "The tuple %t has element 0 of shape s32[], but its operand %p is f32[].");
}

TEST(HloParserErrors, ParametersSignaturesAndHeader) {
  ExpectError(Entry("  %a = f32[] parameter(0)\n  ROOT %b = f32[] parameter(0)"), 5, 8,
              "The parameter %b is parameter(0), like %a; each parameter number appears once.");
  ExpectError(Entry("  %a = f32[] parameter(0)\n  ROOT %b = f32[] parameter(2)"), 5, 8,
              "The parameter %b is parameter(2), but computation %main has only 2 instructions");
  ExpectError(
      Entry("  %a = f32[] parameter(1)\n  %b = f32[] parameter(2)\n  ROOT %c = f32[] add(%a, %b)"),
      3, 7,
      "Computation %main has parameter(2) but no parameter(0); number parameters 0, 1, 2, ... "
      "without gaps.");
  ExpectError(
      "HloModule m\nENTRY %main (a: f32[], b: f32[]) -> f32[] {\n  ROOT %a = f32[] "
      "parameter(0)\n}\n",
      2, 7,
      "Computation %main declares 2 parameters in its signature but has 1 parameter instructions.");
  ExpectError("HloModule m\nENTRY %main (a: s32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n",
              3, 8,
              "The parameter %a has shape f32[], but the signature of %main declares parameter 0 "
              "as s32[].");
  ExpectError("HloModule m\nENTRY %main (a: f32[]) -> s32[] {\n  ROOT %a = f32[] parameter(0)\n}\n",
              3, 8,
              "The root %a has shape f32[], but the signature of %main declares the result s32[].");
  ExpectError(
      "HloModule m, entry_computation_layout={(f32[2]{0})->f32[]}\nENTRY %main {\n  ROOT %a = "
      "f32[] parameter(0)\n}\n",
      1, 39,
      "The entry_computation_layout gives parameter 0 the shape f32[2], but %a is f32[] "
      "(test.hlo:3:8).");
  ExpectError("HloModule m, num_partitions=0\nENTRY %e {\n  ROOT %c = f32[] constant(0)\n}\n", 1,
              29, "expected a count of at least 1 in num_partitions, found '0'.");
  ExpectError("HloModule m, is_scheduled=yes\nENTRY %e {\n  ROOT %c = f32[] constant(0)\n}\n", 1,
              27, "expected true or false in is_scheduled, found 'yes'.");
}

TEST(HloParserErrors, TypedAttributesFailWhereTheValueIsWrong) {
  ExpectError(Entry("  ROOT %p = f32[8] parameter(0), sharding={devices=[2,2]0,1,2}"), 4, 62,
              "expected more device ids: the tile dimensions hold 4 in sharding, found '}'.");
  ExpectError(Entry("  ROOT %p = f32[8] parameter(0), metadata={op_name=\"x\" source_line=ten}"), 4,
              68, "expected a line number in metadata, found 'ten'.");
  ExpectError(Entry("  ROOT %g = (f32[]) parameter(0), to_apply=3"), 4, 44,
              "expected a name such as %add in to_apply, found '3'.");
}

TEST(HloParserErrors, MissingFileNamesThePath) {
  try {
    (void)ParseModuleFile("/no/such/dir/model.hlo");
    FAIL() << "expected an error";
  } catch (const HloError& error) {
    EXPECT_THAT(error.what(), HasSubstr("Cannot read the HLO module file /no/such/dir/model.hlo"));
    EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
  }
  EXPECT_THROW((void)ParseModuleFile(TPUSIM_SOURCE_DIR), HloError);  // a directory
}

}  // namespace
}  // namespace tpusim::hlo

namespace tpusim::hlo {
namespace {

struct Case {
  std::string text;
  int line;
  int column;
  std::string expected;
};

TEST(HloParserErrors, EveryOtherSyntaxMessage) {
  const std::vector<Case> cases = {
      // Shapes and layouts.
      {Entry("  %x = f32 parameter(0)"), 4, 12, "expected '[' after the element type f32"},
      {Entry("  %x = token[1] parameter(0)"), 4, 14, "expected ']' after token["},
      {Entry("  %x = f32[-1] parameter(0)"), 4, 12, "expected a dimension size of at least 0"},
      {Entry("  %x = f32[4294967296,4294967296] parameter(0)"), 4, 8,
       "expected a shape of fewer than 2^63 elements"},
      {Entry("  %x = f32[" +
             [] {
               std::string dims;
               for (int i = 0; i < 65; ++i)
                 dims += "1,";
               return dims;
             }() +
             "1] parameter(0)"),
       4, 8, "expected a shape of at most 64 dimensions"},
      {Entry("  %x = f32[2]{0;} parameter(0)"), 4, 16, "expected ',', ':' or '}' in the layout"},
      {Entry("  %x = f32[2]{0:T(2)\n} parameter(0)"), 4, 21, "expected '}' to close the layout"},
      {Entry("  %x = f32[2]{0:S(x)} parameter(0)"), 4, 19,
       "expected a memory space number in S(...)"},
      {Entry("  %x = f32[2]{0:E(4} parameter(0)"), 4, 34,
       "expected '}' to close the layout, found end of line."},
      // Signatures and parameters.
      {"HloModule m\nENTRY %e (p f32[]) -> f32[] {\n", 2, 13,
       "expected ':' and the shape of parameter p"},
      {"HloModule m\nENTRY %e (: f32[]) -> f32[] {\n", 2, 11,
       "expected a parameter name in the signature of e"},
      {"HloModule m\nENTRY %e (p: f32[] q: f32[]) -> f32[] {\n", 2, 20,
       "expected ',' or ')' in the signature of e"},
      {Entry("  %x = f32[] parameter(0 1)"), 4, 26, "expected ')' after the parameter number"},
      {Entry("  %x = f32[] parameter(-1)"), 4, 24, "expected a parameter number of at least 0"},
      // Literals.
      {Entry("  %c = c64[] constant(1)"), 4, 23,
       "expected '(' to open a complex value (real, imaginary)"},
      {Entry("  %c = c64[] constant((1 2))"), 4, 26,
       "expected ',' between the real and imaginary parts"},
      {Entry("  %c = c64[] constant((1, 2)"), 5, 1, "expected ')' to close the constant's literal"},
      {Entry("  %c = f32[?] constant({})"), 4, 24,
       "expected a constant of a bounded shape (not f32[?])"},
      {Entry("  %c = (f32[]) constant((1)"), 4, 25,
       "expected ')' to close the constant's literal (it runs to the end)"},
      {Entry("  %c = (f32[]) constant(" + std::string(70, '(')), 4, 89,
       "expected a literal nested at most 64 deep"},
      {Entry("  %c = f32[] constant(1 2)"), 4, 25, "expected ')' to close the constant's literal"},
      {Entry("  %c = f32[] constant(nan(0x1)"), 5, 1,
       "expected ')' to close the constant's literal, found '}'."},
      // Attribute values.
      {Entry("  %x = f32[] parameter(0), a=[1,2"), 5, 1,
       "expected ']' to close the '[' at test.hlo:4:30, found '}'."},
      {"HloModule m\nENTRY %e {\n  %x = f32[] parameter(0), a=[1,(2", 3, 33,
       "expected ')' to close this group (it runs to the end), found '('."},
      {Entry("  %x = f32[] parameter(0), a={b)"), 4, 32, "expected ',' or '}' in the list"},
      {Entry("  %x = f32[] parameter(0), a=,"), 4, 30, "expected an attribute value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectError(c.text, c.line, c.column, c.expected);
  }
}

}  // namespace
}  // namespace tpusim::hlo
