#pragma once

// Attributes of a program op, as an XLA HLO instruction or a JAX primitive carries them:
// a name -> value map whose values are one of a few types. The op's schema (OpDef) says
// which names exist, their types and defaults; anything else is an error naming it.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/param.h"
#include "dsl/dtype.h"
#include "dsl/program/computation.h"

namespace tpusim::dsl {

using IntPairs = base::IntPairs;  // e.g. a permutation's (source, destination) pairs
using IntLists = base::IntLists;  // e.g. XLA's replica_groups

// The order matches AttrValue's alternatives.
enum class AttrType {
  kInt,
  kFloat,
  kBool,
  kString,
  kInts,
  kStrings,
  kDType,
  kPrecision,
  kIntPairs,
  kIntLists,
  kComputation,
  kFloats
};
const char* AttrTypeName(AttrType type);  // "int", "float", "bool", "string", "int list", ...

using AttrValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<std::string>,
                 DType, Precision, IntPairs, IntLists, ComputationPtr, std::vector<double>>;

class Attr {
 public:
  Attr(int v) : value_(static_cast<int64_t>(v)) {}        // NOLINT: attributes read like JAX kwargs
  Attr(int64_t v) : value_(v) {}                          // NOLINT
  Attr(double v) : value_(v) {}                           // NOLINT
  Attr(bool v) : value_(v) {}                             // NOLINT
  Attr(const char* v) : value_(std::string(v)) {}         // NOLINT
  Attr(std::string v) : value_(std::move(v)) {}           // NOLINT
  Attr(std::vector<int64_t> v) : value_(std::move(v)) {}  // NOLINT
  Attr(const std::vector<int>& v)                         // NOLINT
      : value_(std::vector<int64_t>(v.begin(), v.end())) {}
  Attr(std::vector<std::string> v) : value_(std::move(v)) {}  // NOLINT
  Attr(DType v) : value_(v) {}                                // NOLINT
  Attr(Precision v) : value_(v) {}                            // NOLINT
  Attr(IntPairs v) : value_(std::move(v)) {}                  // NOLINT
  Attr(IntLists v) : value_(std::move(v)) {}                  // NOLINT
  Attr(ComputationPtr v) : value_(std::move(v)) {}            // NOLINT
  Attr(std::vector<double> v) : value_(std::move(v)) {}       // NOLINT

  AttrType type() const { return static_cast<AttrType>(value_.index()); }
  const AttrValue& value() const { return value_; }
  std::string ToString() const;  // "'x'", "[0, 1]", "bf16", "True"

  // Typed reads; the schema has checked the type already (throws if not).
  int64_t AsInt() const { return std::get<int64_t>(value_); }
  double AsFloat() const { return std::get<double>(value_); }
  bool AsBool() const { return std::get<bool>(value_); }
  const std::string& AsString() const { return std::get<std::string>(value_); }
  const std::vector<int64_t>& AsInts() const { return std::get<std::vector<int64_t>>(value_); }
  const std::vector<std::string>& AsStrings() const {
    return std::get<std::vector<std::string>>(value_);
  }
  DType AsDType() const { return std::get<DType>(value_); }
  Precision AsPrecision() const { return std::get<Precision>(value_); }
  const IntPairs& AsIntPairs() const { return std::get<IntPairs>(value_); }
  const IntLists& AsIntLists() const { return std::get<IntLists>(value_); }
  const Computation& AsComputation() const { return *std::get<ComputationPtr>(value_); }
  const ComputationPtr& AsComputationPtr() const { return std::get<ComputationPtr>(value_); }
  const std::vector<double>& AsFloats() const { return std::get<std::vector<double>>(value_); }

 private:
  AttrValue value_;
};

using Attributes = std::map<std::string, Attr>;

// "axis_name='x', tiled=True": how errors and traces show a call's attributes.
std::string AttributesString(const Attributes& attrs);

}  // namespace tpusim::dsl
