#include "dsl/program/op_registry.h"

#include <algorithm>

#include "base/errors.h"

namespace tpusim::dsl {

OpRegistry& OpRegistry::Get() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry;
    RegisterArrayOps(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Add(OpDef op) {
  if (std::any_of(ops_.begin(), ops_.end(), [&](const OpDef& o) { return o.name == op.name; })) {
    throw Error(ErrorKind::kInvalidArgument,
                "program op '" + op.name + "' is registered twice; give each op its own name.");
  }
  ops_.push_back(std::move(op));
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& op : ops_)
    names.push_back(op.name);
  std::sort(names.begin(), names.end());
  return names;
}

const OpDef& OpRegistry::Find(const std::string& name) const {
  for (const auto& op : ops_) {
    if (op.name == name) return op;
  }
  std::string known;
  for (const auto& n : Names())
    known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown program op '" + name + "'; the known ops are: " + known + ".");
}

void ThrowOpError(const std::string& op, const std::string& message) {
  throw Error(ErrorKind::kInvalidArgument, op + ": " + message);
}

namespace {

std::string SchemaString(const OpDef& op) {
  std::string s;
  for (const auto& a : op.attributes) {
    s += (s.empty() ? "" : ", ") + a.name + " (" + AttrTypeName(a.type) +
         (a.default_value ? ", default " + a.default_value->ToString()
          : a.optional    ? ", optional"
                          : ", required") +
         ")";
  }
  return s.empty() ? "none" : s;
}

// `given` as `want`, when the spelling is unambiguous; nullopt otherwise.
std::optional<Attr> Coerce(const Attr& given, AttrType want) {
  if (given.type() == want) return given;
  if (want == AttrType::kStrings && given.type() == AttrType::kString)
    return Attr(std::vector<std::string>{given.AsString()});
  if (want == AttrType::kFloat && given.type() == AttrType::kInt)
    return Attr(static_cast<double>(given.AsInt()));
  if (want == AttrType::kInts && given.type() == AttrType::kInt)
    return Attr(std::vector<int64_t>{given.AsInt()});
  return std::nullopt;
}

}  // namespace

Attributes ResolveAttributes(const OpDef& op, const Attributes& attrs) {
  for (const auto& entry : attrs) {
    const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture a binding
    const bool known = std::any_of(op.attributes.begin(), op.attributes.end(),
                                   [&](const AttrSpec& a) { return a.name == name; });
    if (!known) {
      ThrowOpError(op.name, "unknown attribute '" + name + "'; " + op.name +
                                " takes: " + SchemaString(op) + ".");
    }
  }
  Attributes resolved;
  for (const auto& spec : op.attributes) {
    auto it = attrs.find(spec.name);
    if (it == attrs.end()) {
      if (!spec.default_value && spec.optional) continue;
      if (!spec.default_value) {
        ThrowOpError(op.name, "the attribute '" + spec.name + "' (" + AttrTypeName(spec.type) +
                                  ": " + spec.description + ") is required; pass it.");
      }
      resolved.emplace(spec.name, *spec.default_value);
      continue;
    }
    auto value = Coerce(it->second, spec.type);
    if (!value) {
      ThrowOpError(op.name, "the attribute '" + spec.name + "' must be a " +
                                AttrTypeName(spec.type) + " (" + spec.description + "), got " +
                                AttrTypeName(it->second.type()) + " " + it->second.ToString() +
                                ".");
    }
    resolved.emplace(spec.name, *value);
  }
  return resolved;
}

}  // namespace tpusim::dsl
