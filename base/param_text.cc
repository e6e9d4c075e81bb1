#include "base/param_text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/param.h"

namespace tpusim::base {

namespace {

std::string Trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

bool Opens(char c) {
  return c == '{' || c == '[';
}
bool Closes(char c) {
  return c == '}' || c == ']';
}

// Where the bracket opening at `open` closes; npos when it does not.
size_t Closing(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (Opens(text[i])) ++depth;
    if (Closes(text[i]) && --depth == 0) return i;
  }
  return std::string::npos;
}

// `text` without the brackets around all of it, when they are there.
std::optional<std::string> Unwrapped(const std::string& text) {
  if (text.size() < 2 || !Opens(text.front()) || Closing(text, 0) != text.size() - 1)
    return std::nullopt;
  return text.substr(1, text.size() - 2);
}

// The items of `text` split at the commas outside brackets, each trimmed; none for "".
std::vector<std::string> Items(const std::string& text) {
  std::vector<std::string> items;
  if (Trimmed(text).empty()) return items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && Opens(text[i])) ++depth;
    if (i < text.size() && Closes(text[i])) --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      items.push_back(Trimmed(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return items;
}

// The items of a flat list, in brackets or not.
std::vector<std::string> FlatItems(const std::string& text) {
  const std::string trimmed = Trimmed(text);
  return Items(Unwrapped(trimmed).value_or(trimmed));
}

template <class T, class Parse>
std::optional<std::vector<T>> ParseEach(const std::vector<std::string>& items, Parse parse) {
  std::vector<T> values;
  for (const auto& item : items) {
    auto value = parse(item);
    if (!value) return std::nullopt;
    values.push_back(std::move(*value));
  }
  return values;
}

}  // namespace

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::vector<int64_t>> ParseIntList(const std::string& text) {
  return ParseEach<int64_t>(FlatItems(text), ParseInt);
}

std::optional<std::vector<std::vector<int64_t>>> ParseIntLists(const std::string& text) {
  std::string trimmed = Trimmed(text);
  // Wrapped once more ("{{0,1},{2,3}}", "{}"): the brackets around all of it go.
  if (const auto inner = Unwrapped(trimmed)) {
    const std::string rest = Trimmed(*inner);
    if (rest.empty() || Opens(rest.front())) trimmed = rest;
  }
  return ParseEach<std::vector<int64_t>>(
      Items(trimmed), [](const std::string& item) -> std::optional<std::vector<int64_t>> {
        const auto inner = Unwrapped(item);
        if (!inner) return std::nullopt;
        return ParseIntList(*inner);
      });
}

std::optional<std::vector<std::string>> ParseStrings(const std::string& text) {
  return ParseEach<std::string>(
      FlatItems(text), [](std::string item) -> std::optional<std::string> {
        if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"') &&
            item.back() == item.front())
          item = item.substr(1, item.size() - 2);
        if (item.empty()) return std::nullopt;
        return item;
      });
}

std::optional<std::vector<double>> ParseDoubles(const std::string& text) {
  return ParseEach<double>(FlatItems(text), [](const std::string& item) -> std::optional<double> {
    if (item.empty()) return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size()) return std::nullopt;
    return value;
  });
}

std::string IntListText(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(values[i]);
  }
  return text;
}

std::string DoubleText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::optional<uint64_t> ParseByteSize(const std::string& text, bool* overflow) {
  if (overflow) *overflow = false;
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
    ++digits;
  std::string unit = text.substr(digits);
  for (auto& c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  uint64_t multiplier = 0;
  if (unit.empty() || unit == "B") multiplier = 1;
  if (unit == "K" || unit == "KB" || unit == "KIB") multiplier = 1ull << 10;
  if (unit == "M" || unit == "MB" || unit == "MIB") multiplier = 1ull << 20;
  if (unit == "G" || unit == "GB" || unit == "GIB") multiplier = 1ull << 30;
  if (digits == 0 || multiplier == 0) return std::nullopt;
  uint64_t count = 0, bytes = 0;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + digits, count);
  if (error != std::errc() || __builtin_mul_overflow(count, multiplier, &bytes)) {
    if (overflow) *overflow = true;
    return std::nullopt;
  }
  return bytes;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i ? ", " : "") + items[i];
  return text;
}

std::string HumanBytes(uint64_t bytes) {
  char text[64];
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) {
    std::snprintf(text, sizeof text, "%llu GiB", static_cast<unsigned long long>(bytes >> 30));
  } else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) {
    std::snprintf(text, sizeof text, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
  } else if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) {
    std::snprintf(text, sizeof text, "%llu KiB", static_cast<unsigned long long>(bytes >> 10));
  } else {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

}  // namespace tpusim::base
