#pragma once

// The text forms of base::Param's list values (base/param.h), parsed and written one way:
// items separated by commas, optionally in braces as HLO prints them ("{0,1}") or brackets
// as Python does ("[0, 1]"); a list of lists writes each inner list in braces
// ("{0,1},{2,3}", or wrapped once more: "{{0,1},{2,3}}"). "" and "{}" are the empty list.
// Internal to base/param.cc; base/param_text.cc also holds the text helpers base/param.h
// declares (ParseByteSize, HumanBytes, JoinList).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpusim::base {

std::optional<int64_t> ParseInt(const std::string& text);
std::optional<std::vector<int64_t>> ParseIntList(const std::string& text);
std::optional<std::vector<std::vector<int64_t>>> ParseIntLists(const std::string& text);
// Each item may be quoted ('x' or "x"), as Python prints a list of strings; none is empty.
std::optional<std::vector<std::string>> ParseStrings(const std::string& text);
// Any IEEE values: "inf", "-inf" and "nan" too (a constant's values may be such).
std::optional<std::vector<double>> ParseDoubles(const std::string& text);
// A finite number spelt in full ("0.5", "1e-3").
std::optional<double> ParseDouble(const std::string& text);

std::string IntListText(const std::vector<int64_t>& values);  // "0,1"
std::string DoubleText(double value);                         // "%g": "0.5", "1e-06"

}  // namespace tpusim::base
