#pragma once

// One declared parameter: the one way the tree declares a named, typed value that a user
// sets, in the style of Ramulator 2. A kernel's and a program's parameters
// (kernels/params.h, which binds values to them), a memory or compute model's parameters
// (sim/model_registry.h), the attributes a pallas_call target takes (derived from its
// kernel's declarations, dsl/program/op_registry.h) and the ranges of a topology's fields
// (topologies/topology_loader.cc) are each a Param: name, type, unit, default, allowed range
// or values, and a one-line description.
//
//   const std::vector<Param> params = {
//       Param::Bytes("chunk_bytes", "most bytes one VMEM chunk holds")
//           .Auto("sized from the chip's VMEM")
//           .Range(1, 1ull << 30),
//       Param::Enum("direction", {"right", "left"}, "where each device sends").Default("right"),
//   };

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace tpusim::base {

// The lists: kInts, whole numbers ("0,1", an op's dimensions); kIntLists, lists of them
// ("{0,1},{2,3}", XLA's replica_groups); kIntPairs, pairs of them ("{0,1},{1,0}", a
// permutation's (source, destination) pairs); kStrings, texts ("x,y", mesh axes); kDoubles,
// numbers ("0.5,1"; unlike a kDouble, inf and nan too: a constant's values may be such).
// A range, if any, bounds each whole number or number, and no range holds nan.
enum class ParamType {
  kInt,
  kBytes,
  kDouble,
  kBool,
  kString,
  kEnum,
  kInts,
  kIntLists,
  kIntPairs,
  kStrings,
  kDoubles
};
// "int", "bytes", "double", "bool", "string", "enum", "int list", "list of int lists",
// "list of (int, int) pairs", "string list", "double list"
const char* ParamTypeName(ParamType type);

using IntList = std::vector<int64_t>;
using IntLists = std::vector<std::vector<int64_t>>;
using IntPairs = std::vector<std::pair<int64_t, int64_t>>;

// A value as a caller gives it: a number, a flag, or text. Text is parsed by the declared
// type (a size may be "16M"), so the CLI passes its arguments as given.
class ParamValue {
 public:
  using Storage = std::variant<bool, int64_t, uint64_t, double, std::string, IntList, IntLists,
                               IntPairs, std::vector<std::string>, std::vector<double>>;

  ParamValue(bool value) : value_(value) {}
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) ParamValue(T value) {
    if constexpr (std::is_signed_v<T>) {
      value_ = static_cast<int64_t>(value);
    } else {
      value_ = static_cast<uint64_t>(value);
    }
  }
  ParamValue(double value) : value_(value) {}
  ParamValue(std::string value) : value_(std::move(value)) {}
  ParamValue(const char* value) : value_(std::string(value)) {}
  ParamValue(IntList value) : value_(std::move(value)) {}
  ParamValue(IntLists value) : value_(std::move(value)) {}
  ParamValue(IntPairs value) : value_(std::move(value)) {}
  ParamValue(std::vector<std::string> value) : value_(std::move(value)) {}
  ParamValue(std::vector<double> value) : value_(std::move(value)) {}
  // A named value of another layer (a dtype, a precision): the layer declares
  // `ParamValueText(value)` next to its type, found by argument-dependent lookup.
  template <class T>
  requires requires(T v) {
    { ParamValueText(v) } -> std::convertible_to<std::string>;
  }
  ParamValue(T value) : value_(std::string(ParamValueText(value))) {}
  explicit ParamValue(Storage value) : value_(std::move(value)) {}

  const Storage& storage() const { return value_; }
  // As a user would write it: 4096, 0.5, true, bf16, 0,1, {0,1},{2,3}, x,y.
  std::string ToString() const;
  // The value as a number (a number, or text that spells one); nullopt otherwise.
  std::optional<double> Number() const;

 private:
  Storage value_;
};

// The values a caller sets, by parameter name; the rest take their defaults.
using ParamValues = std::map<std::string, ParamValue>;

// One declared parameter. Without Default() or Auto() it is required.
class Param {
 public:
  static Param Int(std::string name, std::string description);
  static Param Bytes(std::string name, std::string description);  // "64K", "16M": powers of 1024
  static Param Double(std::string name, std::string description);
  static Param Bool(std::string name, std::string description);
  static Param String(std::string name, std::string description);
  static Param Enum(std::string name, std::vector<std::string> values, std::string description);
  static Param Ints(std::string name, std::string description);      // "0,1"; a range bounds each
  static Param IntLists(std::string name, std::string description);  // "{0,1},{2,3}"
  static Param IntPairs(std::string name, std::string description);  // "{0,1},{1,0}"
  static Param Strings(std::string name, std::string description);   // "x,y"
  static Param Doubles(std::string name, std::string description);   // "0.5,1"

  // Each returns a changed copy, so a shared declaration can be adapted by one entry.
  Param Default(ParamValue value) const;
  // May be left unset: the entry then chooses, as `how` says (e.g. "sized from VMEM").
  Param Auto(std::string how) const;
  Param Required() const;  // drops a default or Auto()
  Param Unit(std::string unit) const;
  Param Range(ParamValue min, ParamValue max) const;  // numbers: both ends allowed
  Param Min(ParamValue min) const;
  Param Values(std::vector<std::string> values) const;  // enums: the allowed values
  Param Description(std::string description) const;

  const std::string& name() const { return name_; }
  ParamType type() const { return type_; }
  const std::string& description() const { return description_; }
  const std::string& unit() const { return unit_; }
  const std::optional<ParamValue>& default_value() const { return default_; }
  const std::string& auto_text() const { return auto_; }
  bool required() const { return !default_ && auto_.empty(); }
  const std::vector<std::string>& values() const { return values_; }
  const std::optional<ParamValue>& min() const { return min_; }
  const std::optional<ParamValue>& max() const { return max_; }

  // For help texts and errors: "bytes", "int, rows".
  std::string TypeText() const;
  // "4096", "auto (sized from VMEM)" or "required".
  std::string DefaultText() const;
  // "1 to 1073741824", "at least 1", "one of bf16, f32", "true or false", "any text".
  std::string AllowedText() const;
  // "int, rows; default 2; 1 to 16": everything but the name and description.
  std::string Summary() const;
  // Empty when the declaration is sound; else why not (a default out of its own range...).
  std::string Problem() const;

  // `given` in the declared type's storage (int64_t for int, uint64_t for bytes, double,
  // bool, string for string and enum, IntList, IntLists, IntPairs, vector<string> and
  // vector<double> for the lists); nullopt, with `why` saying what the value is not ("not a
  // whole number"), when it is of another type.
  std::optional<ParamValue::Storage> Canonical(const ParamValue& given, std::string& why) const;
  // Why `value` (as Canonical gives it) is not allowed ("out of its range: allowed 1 to 16"),
  // or "".
  std::string Disallowed(const ParamValue::Storage& value) const;

 private:
  Param(std::string name, ParamType type, std::string description);
  template <class Change>
  Param Changed(Change change) const {
    Param copy = *this;
    change(copy);
    return copy;
  }

  std::string name_;
  ParamType type_;
  std::string description_;
  std::string unit_;
  std::optional<ParamValue> default_;
  std::string auto_;
  std::vector<std::string> values_;
  std::optional<ParamValue> min_, max_;
};

// Builds one declaration list from single Params and lists of them (shared sets).
inline void AppendParams(std::vector<Param>&) {}
template <class... Rest>
void AppendParams(std::vector<Param>& list, Param first, Rest&&... rest);
template <class... Rest>
void AppendParams(std::vector<Param>& list, const std::vector<Param>& first, Rest&&... rest) {
  list.insert(list.end(), first.begin(), first.end());
  AppendParams(list, std::forward<Rest>(rest)...);
}
template <class... Rest>
void AppendParams(std::vector<Param>& list, Param first, Rest&&... rest) {
  list.push_back(std::move(first));
  AppendParams(list, std::forward<Rest>(rest)...);
}
template <class... Items>
std::vector<Param> ParamList(Items&&... items) {
  std::vector<Param> list;
  AppendParams(list, std::forward<Items>(items)...);
  return list;
}

// "16M", "4096", "64KiB", "1G": binary multiples. nullopt when `text` is not such a size;
// *overflow says when it is one but more than 64 bits hold.
std::optional<uint64_t> ParseByteSize(const std::string& text, bool* overflow = nullptr);
std::string HumanBytes(uint64_t bytes);                       // "64 KiB", "1000 B"
std::string JoinList(const std::vector<std::string>& items);  // "a, b, c"

}  // namespace tpusim::base
