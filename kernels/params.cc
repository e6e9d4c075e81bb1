#include "kernels/params.h"
#include "base/text.h"

namespace tpusim::kernels {

namespace {

std::string Quoted(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? ", '" : "'") + names[i] + "'";
  return text;
}

}  // namespace

Params BindParams(const std::string& entry, const std::vector<Param>& declared,
                  const ParamValues& given) {
  std::vector<std::string> unknown, names;
  for (const auto& param : declared)
    names.push_back(param.name());
  for (const auto& [name, value] : given) {
    bool known = false;
    for (const auto& param : declared)
      known = known || param.name() == name;
    if (!known) unknown.push_back(name);
  }
  if (!unknown.empty()) {
    throw ParamError(
        unknown,
        entry + " takes no parameter" + (unknown.size() > 1 ? "s " : " ") + Quoted(unknown) + "; " +
            (names.empty() ? "it takes none." : "its parameters are " + JoinList(names) + "."),
        entry);
  }
  Params params;
  params.entry_ = entry;
  std::vector<std::string> missing;
  std::string missing_text;
  for (const auto& param : declared) {
    const auto it = given.find(param.name());
    const ParamValue* value = it != given.end()       ? &it->second
                              : param.default_value() ? &*param.default_value()
                                                      : nullptr;
    Params::Slot slot{param.name(), param.type(), std::nullopt};
    if (value) {
      std::string why;
      slot.value = param.Canonical(*value, why);
      if (!slot.value) {
        throw ParamError({param.name()},
                         entry + ": parameter '" + param.name() + "' is '" + value->ToString() +
                             "', " + why + " (" + param.description() + ").",
                         entry);
      }
      const std::string disallowed = param.Disallowed(*slot.value);
      if (!disallowed.empty()) {
        const bool text = std::holds_alternative<std::string>(*slot.value);
        // Built with +=: GCC 12 at -O3 misreads `"'" + string` (-Wrestrict).
        std::string shown = text ? "'" : "";
        shown += value->ToString();
        if (text) shown += "'";
        throw ParamError({param.name()},
                         entry + ": parameter '" + param.name() + "' is " + shown + ", " +
                             disallowed + " (" + param.description() + ").",
                         entry);
      }
    } else if (param.required()) {
      missing.push_back(param.name());
      missing_text += (missing_text.empty() ? "'" : ", '") + param.name() + "' (" +
                      param.TypeText() + ": " + param.description() + ")";
    }
    params.slots_.push_back(std::move(slot));
  }
  if (!missing.empty()) {
    throw ParamError(missing,
                     entry + " needs parameter" + (missing.size() > 1 ? "s " : " ") + missing_text +
                         ", which " + (missing.size() > 1 ? "have" : "has") + " no default.",
                     entry);
  }
  return params;
}

const Params::Slot& Params::Find(const std::string& name, ParamType type) const {
  for (const auto& slot : slots_) {
    if (slot.name != name) continue;
    const bool text = type == ParamType::kString &&
                      (slot.type == ParamType::kString || slot.type == ParamType::kEnum);
    if (slot.type != type && !text) {
      throw Error(ErrorKind::kKernelMisuse, entry_ + " reads its " + ParamTypeName(slot.type) +
                                                " parameter '" + name + "' as a " +
                                                ParamTypeName(type) + "; read it as declared.");
    }
    if (!slot.value) {
      throw Error(ErrorKind::kKernelMisuse,
                  entry_ + " reads parameter '" + name +
                      "', which was left unset (it is declared Auto()); check Has() first.");
    }
    return slot;
  }
  throw Error(ErrorKind::kKernelMisuse,
              entry_ + " reads parameter '" + name +
                  "', which it does not declare; add it to its KernelInfo::params.");
}

template <class T>
const T& Params::Get(const std::string& name, ParamType type) const {
  return std::get<T>(*Find(name, type).value);
}

int64_t Params::Int(const std::string& name) const {
  return Get<int64_t>(name, ParamType::kInt);
}
uint64_t Params::Bytes(const std::string& name) const {
  return Get<uint64_t>(name, ParamType::kBytes);
}
double Params::Double(const std::string& name) const {
  return Get<double>(name, ParamType::kDouble);
}
bool Params::Bool(const std::string& name) const {
  return Get<bool>(name, ParamType::kBool);
}
const std::string& Params::String(const std::string& name) const {
  return Get<std::string>(name, ParamType::kString);
}
const std::vector<int64_t>& Params::Ints(const std::string& name) const {
  return Get<std::vector<int64_t>>(name, ParamType::kInts);
}
const base::IntLists& Params::IntLists(const std::string& name) const {
  return Get<base::IntLists>(name, ParamType::kIntLists);
}
const base::IntPairs& Params::IntPairs(const std::string& name) const {
  return Get<base::IntPairs>(name, ParamType::kIntPairs);
}
const std::vector<std::string>& Params::Strings(const std::string& name) const {
  return Get<std::vector<std::string>>(name, ParamType::kStrings);
}
const std::vector<double>& Params::Doubles(const std::string& name) const {
  return Get<std::vector<double>>(name, ParamType::kDoubles);
}

bool Params::Declares(const std::string& name) const {
  for (const auto& slot : slots_) {
    if (slot.name == name) return true;
  }
  return false;
}

bool Params::Has(const std::string& name) const {
  for (const auto& slot : slots_) {
    if (slot.name == name) return slot.value.has_value();
  }
  return false;
}

std::optional<ParamType> Params::TypeOf(const std::string& name) const {
  for (const auto& slot : slots_) {
    if (slot.name == name) return slot.type;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, ParamValue>> Params::Values() const {
  std::vector<std::pair<std::string, ParamValue>> values;
  for (const auto& slot : slots_) {
    if (slot.value) values.emplace_back(slot.name, ParamValue(*slot.value));
  }
  return values;
}

std::string Params::Describe() const {
  std::string text;
  for (const auto& slot : slots_) {
    if (slot.value)
      base::AppendListItem(text, " ", slot.name + "=" + ParamValue(*slot.value).ToString());
  }
  return text;
}

}  // namespace tpusim::kernels
