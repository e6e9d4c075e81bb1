#include "dsl/program/op_registry.h"

#include <algorithm>

#include "base/errors.h"
#include "base/text.h"

namespace tpusim::dsl {

namespace {

template <typename Def>
const Def& FindNamed(const base::Registry<Def>& defs, const std::string& name,
                     const std::string& unknown, const std::string& known_are) {
  if (const Def* def = defs.Find(name)) return *def;
  std::string known;
  for (const auto& n : defs.Names())
    base::AppendListItem(known, ", ", n);
  throw Error(ErrorKind::kInvalidArgument,
              unknown + " '" + name + "'; " + known_are + ": " + known + ".");
}

}  // namespace

OpRegistry& OpRegistry::Get() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry;
    RegisterArrayOps(*r);
    RegisterElementwiseOps(*r);
    RegisterShapeOps(*r);
    RegisterReduceOps(*r);
    RegisterDotGeneralOps(*r);
    RegisterIndexingOps(*r);
    RegisterFusionOps(*r);
    RegisterPallasCallOp(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Add(OpDef op) {
  const std::string name = op.name;
  ops_.Add(name, std::move(op));
}

std::vector<std::string> OpRegistry::Names() const {
  return ops_.Names();
}

const OpDef& OpRegistry::Find(const std::string& name) const {
  return FindNamed(ops_, name, "unknown program op", "the known ops are");
}

void OpRegistry::AddCallTarget(CallTarget target) {
  const std::string name = target.name;
  targets_.Add(name, std::move(target));
}

std::vector<std::string> OpRegistry::CallTargetNames() const {
  return targets_.Names();
}

const CallTarget& OpRegistry::FindCallTarget(const std::string& name) const {
  return FindNamed(targets_, name, "pallas_call: unknown call_target_name",
                   "the kernels programs can call by name are");
}

double Bytes(const ShapeDtype& t) {
  return static_cast<double>(NumElements(t.shape)) * SizeOf(t.dtype);
}

double Bytes(const std::vector<ShapeDtype>& ts) {
  double bytes = 0;
  for (const ShapeDtype& t : ts)
    bytes += Bytes(t);
  return bytes;
}

XlaWork ReadWriteWork(const std::vector<ShapeDtype>& read, const std::vector<ShapeDtype>& written) {
  XlaWork work;
  work.hbm_read_bytes = Bytes(read);
  work.hbm_write_bytes = Bytes(written);
  return work;
}

XlaWork MemoryBoundWork(const OpTyping& t, const std::vector<ShapeDtype>& results) {
  XlaWork work = ReadWriteWork(t.operands, results);
  for (const ShapeDtype& r : results)
    work.vector_ops += static_cast<double>(NumElements(r.shape));
  return work;
}

void ThrowOpError(const std::string& op, const std::string& message) {
  throw Error(ErrorKind::kInvalidArgument, op + ": " + message);
}

namespace {

std::string SchemaString(const std::vector<AttrSpec>& schema) {
  std::string s;
  for (const auto& a : schema) {
    base::AppendListItem(s, ", ",
                         a.name + " (" + AttrTypeName(a.type) +
                             (a.default_value ? ", default " + a.default_value->ToString()
                              : a.optional    ? ", optional"
                                              : ", required") +
                             ")");
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
  const std::vector<AttrSpec> schema = op.schema_for ? op.schema_for(attrs) : op.attributes;
  for (const auto& entry : attrs) {
    const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture a binding
    const bool known = std::any_of(schema.begin(), schema.end(),
                                   [&](const AttrSpec& a) { return a.name == name; });
    if (!known) {
      ThrowOpError(op.name, "unknown attribute '" + name + "'; " + op.name +
                                " takes: " + SchemaString(schema) + ".");
    }
  }
  Attributes resolved;
  for (const auto& spec : schema) {
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
