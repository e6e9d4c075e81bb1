#pragma once

// Typed, documented parameters of registry entries, in the style of Ramulator 2: every
// kernel and program declares each parameter it takes (name, type, default, unit, allowed
// range or values, one-line description), and gets back checked values by name.
//
//   const std::vector<Param> params = {
//       Param::Bytes("chunk_bytes", "most bytes one VMEM chunk holds")
//           .Auto("sized from the chip's VMEM")
//           .Range(1, 1ull << 30),
//       Param::Enum("direction", {"right", "left"}, "where each device sends").Default("right"),
//   };
//   ...
//   Workload Make(const dsl::Mesh& mesh, const Params& p) {
//     const bool left = p.String("direction") == "left";
//
// The library speaks in parameter names only; the CLI makes one flag per name (--NAME,
// '_' spelled '-') from the declarations and maps the names in errors back to flags.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "base/errors.h"
#include "dsl/dtype.h"

namespace tpusim::kernels {

enum class ParamType { kInt, kBytes, kDouble, kBool, kString, kEnum };
const char* ParamTypeName(ParamType type);  // "int", "bytes", "double", "bool", "string", "enum"

// A value as a caller gives it: a number, a flag, or text. Text is parsed by the declared
// type (a size may be "16M"), so the CLI passes its arguments as given.
class ParamValue {
 public:
  using Storage = std::variant<bool, int64_t, uint64_t, double, std::string>;

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
  ParamValue(dsl::DType dtype) : value_(std::string(dsl::DTypeName(dtype))) {}
  ParamValue(dsl::Precision precision) : value_(std::string(dsl::PrecisionName(precision))) {}
  explicit ParamValue(Storage value) : value_(std::move(value)) {}

  const Storage& storage() const { return value_; }
  std::string ToString() const;  // as a user would write it: 4096, 0.5, true, bf16

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

// A bad parameter value, or one missing: names the parameters (`params`) so that a caller
// can say how they are set (the CLI appends their flags). kind() is kInvalidArgument.
class ParamError : public Error {
 public:
  ParamError(std::vector<std::string> params, const std::string& message, std::string entry = "")
      : Error(ErrorKind::kInvalidArgument, message),
        params_(std::move(params)),
        entry_(std::move(entry)) {}
  const std::vector<std::string>& params() const { return params_; }
  const std::string& entry() const { return entry_; }  // empty when not known

 private:
  std::vector<std::string> params_;
  std::string entry_;
};

// The checked values of every parameter one entry declares, read by name. Reading a name
// the entry did not declare, or as another type, is the entry's bug: Error(kKernelMisuse).
class Params {
 public:
  Params() = default;

  // How to build the workload, not parameters: functional = false makes placeholder
  // inputs and no reference (timing-only runs); seed draws the random inputs.
  bool functional = true;
  uint64_t seed = 1;

  int64_t Int(const std::string& name) const;
  uint64_t Bytes(const std::string& name) const;
  double Double(const std::string& name) const;
  bool Bool(const std::string& name) const;
  const std::string& String(const std::string& name) const;  // string and enum parameters
  // Whether the entry declares `name`, and whether it has a value (an Auto() one left
  // unset has none).
  bool Declares(const std::string& name) const;
  bool Has(const std::string& name) const;

  // The declared type of `name`; nullopt when the entry does not declare it.
  std::optional<ParamType> TypeOf(const std::string& name) const;
  // Every parameter with a value, in declaration order.
  std::vector<std::pair<std::string, ParamValue>> Values() const;

  const std::string& entry() const { return entry_; }
  // "bytes=65536 dtype=bf16": every parameter with a value, in declaration order.
  std::string Describe() const;

 private:
  friend Params BindParams(const std::string& entry, const std::vector<Param>& declared,
                           const ParamValues& given);
  struct Slot {
    std::string name;
    ParamType type;
    std::optional<ParamValue::Storage> value;
  };
  const Slot& Find(const std::string& name, ParamType type) const;
  template <class T>
  const T& Get(const std::string& name, ParamType type) const;

  std::string entry_;
  std::vector<Slot> slots_;
};

// `given` checked against what `entry` declares: defaults filled in. Throws ParamError
// naming every parameter the entry does not take, one that is missing, a value of the
// wrong type or out of range, each with the allowed values.
Params BindParams(const std::string& entry, const std::vector<Param>& declared,
                  const ParamValues& given);

// "16M", "4096", "64KiB", "1G": binary multiples. nullopt when `text` is not such a size;
// *overflow says when it is one but more than 64 bits hold.
std::optional<uint64_t> ParseByteSize(const std::string& text, bool* overflow = nullptr);
std::string HumanBytes(uint64_t bytes);                       // "64 KiB", "1000 B"
std::string JoinList(const std::vector<std::string>& items);  // "a, b, c"

}  // namespace tpusim::kernels
