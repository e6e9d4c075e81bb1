#include "dsl/program/attributes.h"

namespace tpusim::dsl {

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kBool:
      return "bool";
    case AttrType::kString:
      return "string";
    case AttrType::kInts:
      return "int list";
    case AttrType::kStrings:
      return "string list";
    case AttrType::kDType:
      return "dtype";
    case AttrType::kPrecision:
      return "precision";
    case AttrType::kIntPairs:
      return "list of (int, int) pairs";
    case AttrType::kIntLists:
      return "list of int lists";
    case AttrType::kComputation:
      return "computation";
    case AttrType::kFloats:
      return "float list";
  }
  return "attribute";
}

namespace {

template <typename T, typename F>
std::string ListString(const std::vector<T>& items, F item) {
  // Appended piece by piece: GCC 12's -Wrestrict misfires on `literal + string` at -O3.
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += item(items[i]);
  }
  s += "]";
  return s;
}

}  // namespace

std::string Attr::ToString() const {
  switch (type()) {
    case AttrType::kInt:
      return std::to_string(AsInt());
    case AttrType::kFloat:
      return std::to_string(AsFloat());
    case AttrType::kBool:
      return AsBool() ? "True" : "False";
    case AttrType::kString:
      return "'" + AsString() + "'";
    case AttrType::kInts:
      return ListString(AsInts(), [](int64_t v) { return std::to_string(v); });
    case AttrType::kStrings:
      return ListString(AsStrings(), [](const std::string& v) { return "'" + v + "'"; });
    case AttrType::kDType:
      return DTypeName(AsDType());
    case AttrType::kPrecision:
      return PrecisionName(AsPrecision());
    case AttrType::kIntPairs:
      return ListString(AsIntPairs(), [](const std::pair<int64_t, int64_t>& p) {
        std::string pair = "(";
        pair += std::to_string(p.first);
        pair += ", ";
        pair += std::to_string(p.second);
        pair += ")";
        return pair;
      });
    case AttrType::kComputation:
      return "%" + AsComputation().name();
    case AttrType::kFloats:
      return ListString(AsFloats(), [](double v) { return std::to_string(v); });
    case AttrType::kIntLists:
      return ListString(AsIntLists(), [](const std::vector<int64_t>& list) {
        return ListString(list, [](int64_t v) { return std::to_string(v); });
      });
  }
  return "?";
}

std::string AttributesString(const Attributes& attrs) {
  std::string s;
  for (const auto& [name, value] : attrs) {
    if (!s.empty()) s += ", ";
    s += name;
    s += "=";
    s += value.ToString();
  }
  return s;
}

}  // namespace tpusim::dsl
