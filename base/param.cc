#include "base/param.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "base/param_text.h"

namespace tpusim::base {

namespace {

using Storage = ParamValue::Storage;

std::string StorageText(const Storage& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, double>) {
          return DoubleText(v);
        } else if constexpr (std::is_same_v<T, IntList>) {
          return IntListText(v);
        } else if constexpr (std::is_same_v<T, IntLists> || std::is_same_v<T, IntPairs>) {
          std::string text;
          for (size_t i = 0; i < v.size(); ++i) {
            if (i) text += ",";
            text += "{";
            if constexpr (std::is_same_v<T, IntLists>) {
              text += IntListText(v[i]);
            } else {
              text += IntListText({v[i].first, v[i].second});
            }
            text += "}";
          }
          return text;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>> ||
                             std::is_same_v<T, std::vector<double>>) {
          std::string text;
          for (size_t i = 0; i < v.size(); ++i) {
            if (i) text += ",";
            text += StorageText(v[i]);
          }
          return text;
        } else {
          return std::to_string(v);
        }
      },
      value);
}

std::optional<bool> ParseBool(std::string text) {
  for (auto& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (text == "true" || text == "yes" || text == "on" || text == "1") return true;
  if (text == "false" || text == "no" || text == "off" || text == "0") return false;
  return std::nullopt;
}

// `given` as the canonical storage of `type` (int64_t, uint64_t, double, bool, string);
// nullopt with `why` (what the value is not) when it is of another type.
std::optional<Storage> Convert(ParamType type, const ParamValue& given, std::string& why) {
  const Storage& v = given.storage();
  switch (type) {
    case ParamType::kInt:
      why = "not a whole number";
      if (const auto* i = std::get_if<int64_t>(&v)) return *i;
      if (const auto* u = std::get_if<uint64_t>(&v)) {
        if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          return static_cast<int64_t>(*u);
        why = "more than a 64-bit integer holds";
      }
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (const auto i = ParseInt(*s)) return *i;
      }
      return std::nullopt;
    case ParamType::kBytes:
      why =
          "not a size in bytes: write a number with an optional K, M or G suffix (powers of "
          "1024), e.g. 16M";
      if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
      if (const auto* i = std::get_if<int64_t>(&v)) {
        if (*i >= 0) return static_cast<uint64_t>(*i);
      }
      if (const auto* s = std::get_if<std::string>(&v)) {
        bool overflow = false;
        if (const auto bytes = ParseByteSize(*s, &overflow)) return *bytes;
        if (overflow) why = "more bytes than a 64-bit count holds";
      }
      return std::nullopt;
    case ParamType::kDouble:
      why = "not a finite number";
      if (const auto* d = std::get_if<double>(&v)) {
        if (std::isfinite(*d)) return *d;
      }
      if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
      if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (const auto d = ParseDouble(*s)) return *d;
      }
      return std::nullopt;
    case ParamType::kBool:
      why = "not true or false";
      if (const auto* b = std::get_if<bool>(&v)) return *b;
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (const auto b = ParseBool(*s)) return *b;
      }
      return std::nullopt;
    case ParamType::kString:
    case ParamType::kEnum:
      why = "not text";
      if (const auto* s = std::get_if<std::string>(&v)) return *s;
      return std::nullopt;
    case ParamType::kInts:
      why = "not a list of whole numbers: write them separated by commas, e.g. 0,1";
      if (const auto* list = std::get_if<std::vector<int64_t>>(&v)) return *list;
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (auto list = ParseIntList(*s)) return *list;
        return std::nullopt;
      }
      if (std::string not_int; const auto one = Convert(ParamType::kInt, given, not_int))
        return std::vector<int64_t>{std::get<int64_t>(*one)};
      return std::nullopt;
    case ParamType::kIntLists:
      why =
          "not a list of int lists: write each list in braces, separated by commas, e.g. "
          "{0,1},{2,3}";
      if (const auto* lists = std::get_if<IntLists>(&v)) return *lists;
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (auto lists = ParseIntLists(*s)) return *lists;
      }
      return std::nullopt;
    case ParamType::kIntPairs: {
      why = "not a list of (int, int) pairs: write each pair in braces, e.g. {0,1},{1,0}";
      if (const auto* pairs = std::get_if<IntPairs>(&v)) return *pairs;
      std::optional<IntLists> lists;
      if (const auto* given_lists = std::get_if<IntLists>(&v)) lists = *given_lists;
      if (const auto* s = std::get_if<std::string>(&v)) lists = ParseIntLists(*s);
      if (!lists) return std::nullopt;
      IntPairs pairs;
      for (const auto& list : *lists) {
        if (list.size() != 2) return std::nullopt;
        pairs.emplace_back(list[0], list[1]);
      }
      return pairs;
    }
    case ParamType::kStrings:
      why = "not a list of texts: write them separated by commas, e.g. x,y";
      if (const auto* list = std::get_if<std::vector<std::string>>(&v)) return *list;
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (auto list = ParseStrings(*s)) return *list;
      }
      return std::nullopt;
    case ParamType::kDoubles: {
      why = "not a list of numbers: write them separated by commas, e.g. 0.5,1";
      if (const auto* list = std::get_if<std::vector<double>>(&v)) return *list;
      if (const auto* list = std::get_if<IntList>(&v))
        return std::vector<double>(list->begin(), list->end());
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (auto list = ParseDoubles(*s)) return *list;
        return std::nullopt;
      }
      if (std::string not_number; const auto one = Convert(ParamType::kDouble, given, not_number))
        return std::vector<double>{std::get<double>(*one)};
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// -1, 0, 1 for two canonical values of one numeric type.
int CompareNumbers(const Storage& a, const Storage& b) {
  return std::visit(
      [&b](const auto& x) -> int {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                      std::is_same_v<T, double>) {
          const T y = std::get<T>(b);
          return x < y ? -1 : (y < x ? 1 : 0);
        } else {
          return 0;
        }
      },
      a);
}

// The type a range bounds: a list's range bounds each element.
ParamType BoundType(ParamType type) {
  switch (type) {
    case ParamType::kInts:
    case ParamType::kIntLists:
    case ParamType::kIntPairs:
      return ParamType::kInt;
    case ParamType::kStrings:
      return ParamType::kString;
    case ParamType::kDoubles:
      return ParamType::kDouble;
    default:
      return type;
  }
}

// Each number of a list value (whole numbers of int lists and pairs too), or the value itself.
std::vector<Storage> Elements(const Storage& value) {
  return std::visit(
      [&value](const auto& v) -> std::vector<Storage> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, IntList> || std::is_same_v<T, std::vector<double>>) {
          return std::vector<Storage>(v.begin(), v.end());
        } else if constexpr (std::is_same_v<T, IntLists>) {
          std::vector<Storage> elements;
          for (const auto& list : v)
            elements.insert(elements.end(), list.begin(), list.end());
          return elements;
        } else if constexpr (std::is_same_v<T, IntPairs>) {
          std::vector<Storage> elements;
          for (const auto& [first, second] : v) {
            elements.emplace_back(first);
            elements.emplace_back(second);
          }
          return elements;
        } else {
          return {value};
        }
      },
      value);
}

bool Numeric(ParamType type) {
  type = BoundType(type);
  return type == ParamType::kInt || type == ParamType::kBytes || type == ParamType::kDouble;
}

}  // namespace

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kInt:
      return "int";
    case ParamType::kBytes:
      return "bytes";
    case ParamType::kDouble:
      return "double";
    case ParamType::kBool:
      return "bool";
    case ParamType::kString:
      return "string";
    case ParamType::kEnum:
      return "enum";
    case ParamType::kInts:
      return "int list";
    case ParamType::kIntLists:
      return "list of int lists";
    case ParamType::kIntPairs:
      return "list of (int, int) pairs";
    case ParamType::kStrings:
      return "string list";
    case ParamType::kDoubles:
      return "double list";
  }
  return "?";
}

std::string ParamValue::ToString() const {
  return StorageText(value_);
}

std::optional<double> ParamValue::Number() const {
  std::string why;
  const auto number = Convert(ParamType::kDouble, *this, why);
  if (!number) return std::nullopt;
  return std::get<double>(*number);
}

std::optional<Storage> Param::Canonical(const ParamValue& given, std::string& why) const {
  return Convert(type_, given, why);
}

std::string Param::Disallowed(const Storage& value) const {
  std::string why;
  if (type_ == ParamType::kEnum) {
    for (const auto& allowed : values_) {
      if (std::get<std::string>(value) == allowed) return "";
    }
    return "not " + AllowedText();
  }
  if (!Numeric(type_) || (!min_ && !max_)) return "";
  const ParamType bound = BoundType(type_);
  const auto below = min_ ? Convert(bound, *min_, why) : std::nullopt;
  const auto above = max_ ? Convert(bound, *max_, why) : std::nullopt;
  const auto outside = [&](const Storage& number) {
    const auto* real = std::get_if<double>(&number);
    if (real && std::isnan(*real)) return below || above;  // no range holds nan
    return (below && CompareNumbers(number, *below) < 0) ||
           (above && CompareNumbers(number, *above) > 0);
  };
  for (const Storage& element : Elements(value)) {
    if (outside(element)) return "out of its range: allowed " + AllowedText();
  }
  return "";
}

Param::Param(std::string name, ParamType type, std::string description)
    : name_(std::move(name)), type_(type), description_(std::move(description)) {}

Param Param::Int(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kInt, std::move(description));
}
Param Param::Bytes(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kBytes, std::move(description));
}
Param Param::Double(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kDouble, std::move(description));
}
Param Param::Bool(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kBool, std::move(description));
}
Param Param::String(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kString, std::move(description));
}
Param Param::Ints(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kInts, std::move(description));
}
Param Param::IntLists(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kIntLists, std::move(description));
}
Param Param::IntPairs(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kIntPairs, std::move(description));
}
Param Param::Strings(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kStrings, std::move(description));
}
Param Param::Doubles(std::string name, std::string description) {
  return Param(std::move(name), ParamType::kDoubles, std::move(description));
}
Param Param::Enum(std::string name, std::vector<std::string> values, std::string description) {
  Param param(std::move(name), ParamType::kEnum, std::move(description));
  param.values_ = std::move(values);
  return param;
}

Param Param::Default(ParamValue value) const {
  return Changed([&](Param& p) {
    p.default_ = std::move(value);
    p.auto_.clear();
  });
}
Param Param::Auto(std::string how) const {
  return Changed([&](Param& p) {
    p.auto_ = std::move(how);
    p.default_.reset();
  });
}
Param Param::Required() const {
  return Changed([](Param& p) {
    p.auto_.clear();
    p.default_.reset();
  });
}
Param Param::Unit(std::string unit) const {
  return Changed([&](Param& p) { p.unit_ = std::move(unit); });
}
Param Param::Range(ParamValue min, ParamValue max) const {
  return Changed([&](Param& p) {
    p.min_ = std::move(min);
    p.max_ = std::move(max);
  });
}
Param Param::Min(ParamValue min) const {
  return Changed([&](Param& p) { p.min_ = std::move(min); });
}
Param Param::Values(std::vector<std::string> values) const {
  return Changed([&](Param& p) { p.values_ = std::move(values); });
}
Param Param::Description(std::string description) const {
  return Changed([&](Param& p) { p.description_ = std::move(description); });
}

std::string Param::TypeText() const {
  return std::string(ParamTypeName(type_)) + (unit_.empty() ? "" : ", " + unit_);
}

std::string Param::DefaultText() const {
  if (default_) return default_->ToString();
  if (!auto_.empty()) return "auto (" + auto_ + ")";
  return "required";
}

std::string Param::AllowedText() const {
  auto number = [this](const ParamValue& v) {
    std::string why;
    const auto canonical = Convert(type_, v, why);
    if (type_ == ParamType::kBytes && canonical) {
      const uint64_t bytes = std::get<uint64_t>(*canonical);
      const std::string human = HumanBytes(bytes);
      return bytes < 1024 ? std::to_string(bytes) : std::to_string(bytes) + " (" + human + ")";
    }
    return v.ToString();
  };
  switch (type_) {
    case ParamType::kEnum:
      return "one of " + JoinList(values_);
    case ParamType::kBool:
      return "true or false";
    case ParamType::kString:
    case ParamType::kStrings:
      return "any text";
    case ParamType::kInts:
    case ParamType::kIntLists:
    case ParamType::kIntPairs:
    case ParamType::kDoubles: {
      const std::string each = Param(name_, BoundType(type_), description_)
                                   .Changed([this](Param& p) {
                                     p.min_ = min_;
                                     p.max_ = max_;
                                   })
                                   .AllowedText();
      return each == "any" ? "any" : "each " + each;
    }
    default:
      if (min_ && max_) return number(*min_) + " to " + number(*max_);
      if (min_) return "at least " + number(*min_);
      if (max_) return "at most " + number(*max_);
      return "any";
  }
}

std::string Param::Summary() const {
  return TypeText() + "; " + (required() ? "required" : "default " + DefaultText()) +
         (BoundType(type_) == ParamType::kString ? "" : "; " + AllowedText());
}

std::string Param::Problem() const {
  if (name_.empty() || !std::islower(static_cast<unsigned char>(name_[0])))
    return "parameter '" + name_ + "' must start with a lower-case letter";
  for (char c : name_) {
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '_')
      return "parameter '" + name_ + "' may hold only a-z, 0-9 and '_' (it becomes a flag)";
  }
  if (description_.empty()) return "parameter '" + name_ + "' has no description";
  if (type_ == ParamType::kEnum && values_.empty())
    return "enum parameter '" + name_ + "' declares no allowed values";
  std::string why;
  for (const auto* bound : {&min_, &max_}) {
    if (*bound && (!Numeric(type_) || !Convert(BoundType(type_), **bound, why)))
      return "parameter '" + name_ + "' has a range end that is not a " +
             ParamTypeName(BoundType(type_));
  }
  if (default_) {
    const auto value = Convert(type_, *default_, why);
    if (!value) return "the default of parameter '" + name_ + "' is " + why;
    const std::string disallowed = Disallowed(*value);
    if (!disallowed.empty())
      return "the default of parameter '" + name_ + "' is " + default_->ToString() + ", " +
             disallowed;
  }
  return "";
}

}  // namespace tpusim::base
