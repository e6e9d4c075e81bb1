#pragma once

// Where things are in an HLO text, and the error every failure of the hlo/ layer throws.
// Locations are byte offsets into one shared copy of the text, so an instruction, an
// attribute or a value deep inside one can say "file:line:column" long after parsing, and
// an error can quote the offending line with a caret under the column.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"

namespace tpusim::hlo {

// One HLO text and the name it came from (a path, or a label such as "<text>").
class SourceText {
 public:
  SourceText(std::string file_name, std::string text);

  const std::string& file_name() const { return file_name_; }
  const std::string& text() const { return text_; }
  // 1-based line and column (in bytes) of a byte offset; offsets past the end map to the
  // position just after the last byte.
  int Line(size_t offset) const;
  int Column(size_t offset) const;
  // The text of a 1-based line, without its newline.
  std::string_view LineText(int line) const;

 private:
  std::string file_name_;
  std::string text_;
  std::vector<size_t> line_starts_;  // offset of each line's first byte
};

struct SourceLocation {
  std::shared_ptr<const SourceText> source;
  size_t offset = 0;

  int line() const;
  int column() const;
  std::string file_name() const;
  // "FILE:LINE:COLUMN", or "<unknown location>" when there is no source.
  std::string ToString() const;
};

// A text that does not parse, or parses into a module that makes no sense (an operand that
// is not defined, a reference to a computation that does not exist...). The message is
// "FILE:LINE:COLUMN: SENTENCE" followed by the offending line and a caret under the column.
class HloError : public Error {
 public:
  HloError(const SourceLocation& location, const std::string& sentence);

  const std::string& file_name() const { return file_name_; }
  int line() const { return line_; }
  int column() const { return column_; }
  // The sentence alone, without the location and the quoted line.
  const std::string& sentence() const { return sentence_; }

 private:
  std::string file_name_;
  int line_ = 0;
  int column_ = 0;
  std::string sentence_;
};

// Throws HloError at `location` saying "expected EXPECTED, found 'TEXT'." where TEXT is
// the token that starts there (or "end of file").
[[noreturn]] void FailExpected(const SourceLocation& location, std::string_view expected);
[[noreturn]] void FailAt(const SourceLocation& location, const std::string& sentence);

// The token that starts at `offset`, as an error message quotes it: 'TOKEN', or
// "end of file".
std::string FoundText(const SourceText& source, size_t offset);

}  // namespace tpusim::hlo
