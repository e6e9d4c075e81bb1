#pragma once

// Typed, documented parameters of registry entries: every kernel and program declares each
// parameter it takes as a base::Param (base/param.h: name, type, default, unit, allowed
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
#include "base/param.h"
#include "dsl/dtype.h"

namespace tpusim::dsl {
// A dtype or precision is a parameter value as its name ("bf16", "HIGHEST"): base/param.h.
inline const char* ParamValueText(DType dtype) {
  return DTypeName(dtype);
}
inline const char* ParamValueText(Precision precision) {
  return PrecisionName(precision);
}
}  // namespace tpusim::dsl

namespace tpusim::kernels {

// The declaration is base's; the kernels' code and the CLI name it as their own.
using base::AppendParams;
using base::HumanBytes;
using base::JoinList;
using base::Param;
using base::ParamList;
using base::ParamType;
using base::ParamTypeName;
using base::ParamValue;
using base::ParamValues;
using base::ParseByteSize;

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
  const std::vector<int64_t>& Ints(const std::string& name) const;
  const base::IntLists& IntLists(const std::string& name) const;
  const base::IntPairs& IntPairs(const std::string& name) const;
  const std::vector<std::string>& Strings(const std::string& name) const;
  const std::vector<double>& Doubles(const std::string& name) const;
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

}  // namespace tpusim::kernels
