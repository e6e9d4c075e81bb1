#include "hlo/source.h"

#include <algorithm>
#include <cstdio>

namespace tpusim::hlo {

namespace {

bool IsTokenChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '_' ||
         c == '.' || c == '%' || c == '-' || c == '$' || u >= 0x80;
}

// A byte as an error message can show it: itself when printable, \xNN otherwise.
std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", u);
      out += buffer;
    }
  }
  return out;
}

// At most this many bytes of a long line are quoted under an error, centred on the column.
constexpr size_t kQuotedLineBytes = 120;

std::string QuoteLine(std::string_view line, int column) {
  size_t caret = static_cast<size_t>(std::max(column, 1) - 1);
  std::string prefix, suffix;
  if (line.size() > kQuotedLineBytes) {
    const size_t start = caret > kQuotedLineBytes / 2 ? caret - kQuotedLineBytes / 2 : 0;
    const size_t end = std::min(line.size(), start + kQuotedLineBytes);
    if (start > 0) prefix = "...";
    if (end < line.size()) suffix = "...";
    line = line.substr(start, end - start);
    caret = caret - start + prefix.size();
  }
  const std::string shown = prefix + Printable(line) + suffix;
  std::string marker;
  for (size_t i = 0; i < caret && i < shown.size(); ++i)
    marker += shown[i] == '\t' ? '\t' : ' ';
  return shown + "\n" + marker + "^";
}

}  // namespace

SourceText::SourceText(std::string file_name, std::string text)
    : file_name_(std::move(file_name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

int SourceText::Line(size_t offset) const {
  offset = std::min(offset, text_.size());
  const auto after = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<int>(after - line_starts_.begin());
}

int SourceText::Column(size_t offset) const {
  offset = std::min(offset, text_.size());
  return static_cast<int>(offset - line_starts_[static_cast<size_t>(Line(offset) - 1)]) + 1;
}

std::string_view SourceText::LineText(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  const size_t start = line_starts_[static_cast<size_t>(line - 1)];
  size_t end = text_.find('\n', start);
  if (end == std::string::npos) end = text_.size();
  if (end > start && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(start, end - start);
}

int SourceLocation::line() const {
  return source ? source->Line(offset) : 0;
}
int SourceLocation::column() const {
  return source ? source->Column(offset) : 0;
}
std::string SourceLocation::file_name() const {
  return source ? source->file_name() : "";
}

std::string SourceLocation::ToString() const {
  if (!source) return "<unknown location>";
  return source->file_name() + ":" + std::to_string(line()) + ":" + std::to_string(column());
}

namespace {

std::string FullMessage(const SourceLocation& location, const std::string& sentence) {
  if (!location.source) return sentence;
  std::string message = location.ToString() + ": " + sentence;
  message += '\n';
  message += QuoteLine(location.source->LineText(location.line()), location.column());
  return message;
}

}  // namespace

HloError::HloError(const SourceLocation& location, const std::string& sentence)
    : Error(ErrorKind::kInvalidArgument, FullMessage(location, sentence)),
      file_name_(location.file_name()),
      line_(location.line()),
      column_(location.column()),
      sentence_(sentence) {}

std::string FoundText(const SourceText& source, size_t offset) {
  const std::string& text = source.text();
  if (offset >= text.size()) return "end of file";
  if (text[offset] == '\n' || text[offset] == '\r') return "end of line";
  constexpr size_t kMaxBytes = 40;
  size_t end = offset + 1;
  if (text[offset] == '"') {
    while (end < text.size() && end - offset < kMaxBytes && text[end] != '"' && text[end] != '\n') {
      end += text[end] == '\\' ? 2 : 1;
    }
    if (end < text.size() && text[end] == '"') ++end;
  } else if (IsTokenChar(text[offset])) {
    while (end < text.size() && end - offset < kMaxBytes && IsTokenChar(text[end]))
      ++end;
  }
  std::string found = Printable(std::string_view(text).substr(offset, end - offset));
  if (end - offset >= kMaxBytes && end < text.size()) found += "...";
  return "'" + found + "'";
}

void FailExpected(const SourceLocation& location, std::string_view expected) {
  const std::string found =
      location.source ? FoundText(*location.source, location.offset) : "nothing";
  throw HloError(location, "expected " + std::string(expected) + ", found " + found + ".");
}

void FailAt(const SourceLocation& location, const std::string& sentence) {
  throw HloError(location, sentence);
}

}  // namespace tpusim::hlo
