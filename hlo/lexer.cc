#include "hlo/lexer.h"

#include <limits>

namespace tpusim::hlo {

Lexer::Lexer(std::shared_ptr<const SourceText> source, size_t begin, size_t end)
    : source_(std::move(source)), text_(source_->text()), offset_(begin), end_(end) {
  if (end_ > text_.size()) end_ = text_.size();
}

Lexer::Lexer(std::shared_ptr<const SourceText> source) : Lexer(source, 0, source->text().size()) {}

char Lexer::Peek(size_t ahead) const {
  const size_t at = offset_ + ahead;
  return at < end_ ? text_[at] : '\0';
}

void Lexer::Advance(size_t bytes) {
  offset_ = offset_ + bytes < end_ ? offset_ + bytes : end_;
}

std::string_view Lexer::Slice(size_t begin, size_t end) const {
  if (end > text_.size()) end = text_.size();
  if (begin > end) begin = end;
  return text_.substr(begin, end - begin);
}

void Lexer::SkipSpace() {
  while (offset_ < end_) {
    const char c = text_[offset_];
    if (IsSpace(c)) {
      ++offset_;
    } else if (c == '#' || (c == '/' && Peek(1) == '/')) {
      while (offset_ < end_ && text_[offset_] != '\n')
        ++offset_;
    } else if (c == '/' && Peek(1) == '*') {
      const size_t start = offset_;
      const size_t close = text_.find("*/", offset_ + 2);
      if (close == std::string_view::npos || close + 2 > end_) {
        FailAt(start, "a comment that starts with '/*' to end with '*/' (it runs to the end)");
      }
      offset_ = close + 2;
    } else {
      return;
    }
  }
}

bool Lexer::Consume(char c) {
  SkipSpace();
  if (Peek() != c) return false;
  ++offset_;
  return true;
}

void Lexer::Expect(char c, std::string_view what) {
  if (!Consume(c)) Fail(what);
}

bool Lexer::ConsumeText(std::string_view text) {
  SkipSpace();
  if (Slice(offset_, offset_ + text.size()) != text || offset_ + text.size() > end_) return false;
  offset_ += text.size();
  return true;
}

bool Lexer::ConsumeWord(std::string_view word) {
  SkipSpace();
  if (offset_ + word.size() > end_ || text_.substr(offset_, word.size()) != word) return false;
  if (IsNameChar(Peek(word.size()))) return false;
  offset_ += word.size();
  return true;
}

std::string_view Lexer::ScanName() {
  SkipSpace();
  size_t at = offset_;
  if (Peek() == '%') ++at;
  if (at >= end_ || !(IsLetter(text_[at]) || text_[at] == '_')) return {};
  const size_t start = at;
  while (at < end_ && IsNameChar(text_[at]))
    ++at;
  offset_ = at;
  return text_.substr(start, at - start);
}

std::string_view Lexer::ExpectName(std::string_view what) {
  const std::string_view name = ScanName();
  if (name.empty()) Fail(what);
  return name;
}

bool Lexer::ScanInt(int64_t& value) {
  SkipSpace();
  size_t at = offset_;
  const bool negative = Peek() == '-';
  if (negative) ++at;
  if (at >= end_ || !IsDigit(text_[at])) return false;
  const size_t start = offset_;
  uint64_t magnitude = 0;
  const uint64_t limit =
      negative ? uint64_t{1} << 63 : uint64_t{std::numeric_limits<int64_t>::max()};
  while (at < end_ && IsDigit(text_[at])) {
    const auto digit = static_cast<uint64_t>(text_[at] - '0');
    if (magnitude > (limit - digit) / 10) {
      FailAt(start, "an integer between -2^63 and 2^63-1");
    }
    magnitude = magnitude * 10 + digit;
    ++at;
  }
  offset_ = at;
  value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

int64_t Lexer::ExpectInt(std::string_view what) {
  int64_t value = 0;
  if (!ScanInt(value)) Fail(what);
  return value;
}

namespace {

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Lexer::ScanString() {
  const size_t start = offset_;
  ++offset_;  // the opening quote
  std::string value;
  while (true) {
    if (offset_ >= end_) FailAt(start, "a '\"' to close this string (it runs to the end)");
    const char c = text_[offset_++];
    if (c == '"') return value;
    if (c != '\\') {
      value += c;
      continue;
    }
    if (offset_ >= end_) continue;  // reported as unterminated above
    const char e = text_[offset_++];
    switch (e) {
      case 'n':
        value += '\n';
        break;
      case 't':
        value += '\t';
        break;
      case 'r':
        value += '\r';
        break;
      case 'x': {
        int byte = 0, digits = 0;
        while (digits < 2 && offset_ < end_ && HexValue(text_[offset_]) >= 0) {
          byte = byte * 16 + HexValue(text_[offset_++]);
          ++digits;
        }
        value += digits > 0 ? static_cast<char>(byte) : 'x';
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int byte = e - '0', digits = 1;
          while (digits < 3 && offset_ < end_ && text_[offset_] >= '0' && text_[offset_] <= '7') {
            byte = byte * 8 + (text_[offset_++] - '0');
            ++digits;
          }
          value += static_cast<char>(byte & 0xff);
        } else {
          value += e;  // \" \\ \' and anything else stand for themselves
        }
    }
  }
}

void Lexer::Fail(std::string_view expected) {
  SkipSpace();
  FailAt(offset_, expected);
}

void Lexer::FailAt(size_t offset, std::string_view expected) const {
  FailExpected(Location(offset), expected);
}

}  // namespace tpusim::hlo
