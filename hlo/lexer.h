#pragma once

// The lexer every hlo/ reader shares: a cursor over a range of one SourceText that skips
// whitespace and comments, scans names, integers, numbers and quoted strings, and reports
// "expected X, found 'TEXT'" at its position. The range lets a decoder re-read the text of
// one attribute value with locations that still point into the original file.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hlo/source.h"

namespace tpusim::hlo {

// Nesting deeper than this (braces, tuples, brackets, parentheses) is refused with an
// error: every reader that recurses is bounded by it.
inline constexpr int kMaxNestingDepth = 64;

inline bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
inline bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
// Characters of an HLO name after the first: letters, digits, '_', '.', '-'.
inline bool IsNameChar(char c) {
  return IsLetter(c) || IsDigit(c) || c == '_' || c == '.' || c == '-';
}

class Lexer {
 public:
  Lexer(std::shared_ptr<const SourceText> source, size_t begin, size_t end);
  explicit Lexer(std::shared_ptr<const SourceText> source);

  const std::shared_ptr<const SourceText>& source() const { return source_; }
  size_t offset() const { return offset_; }
  size_t end() const { return end_; }
  bool AtEnd() const { return offset_ >= end_; }
  // The byte `ahead` positions on, or '\0' past the end of the range.
  char Peek(size_t ahead = 0) const;
  void Advance(size_t bytes = 1);
  void Seek(size_t offset) { offset_ = offset; }
  std::string_view Slice(size_t begin, size_t end) const;

  // Skips whitespace and comments: /* ... */, // and # to the end of the line.
  void SkipSpace();
  // After SkipSpace: consumes `c` if it is next.
  bool Consume(char c);
  // After SkipSpace: consumes `c` or fails with "expected WHAT".
  void Expect(char c, std::string_view what);
  // After SkipSpace: consumes `text` if it comes next.
  bool ConsumeText(std::string_view text);
  // After SkipSpace: consumes `word` if it comes next as a whole word.
  bool ConsumeWord(std::string_view word);

  // After SkipSpace: a name, [%][A-Za-z_][A-Za-z0-9_.-]*, returned without its '%';
  // empty (nothing consumed) when none starts here.
  std::string_view ScanName();
  // After SkipSpace: a name or fails with "expected WHAT".
  std::string_view ExpectName(std::string_view what);
  // After SkipSpace: a decimal integer with an optional '-', or nothing consumed.
  bool ScanInt(int64_t& value);
  int64_t ExpectInt(std::string_view what);
  // At '"': the string with its escapes decoded (\" \\ \n \t \r \' \ooo \xNN).
  std::string ScanString();

  SourceLocation Location() const { return Location(offset_); }
  SourceLocation Location(size_t offset) const { return {source_, offset}; }
  // Fails with "expected WHAT, found 'TEXT'." at the current position, after SkipSpace.
  [[noreturn]] void Fail(std::string_view expected);
  [[noreturn]] void FailAt(size_t offset, std::string_view expected) const;

 private:
  std::shared_ptr<const SourceText> source_;
  std::string_view text_;
  size_t offset_;
  size_t end_;
};

}  // namespace tpusim::hlo
