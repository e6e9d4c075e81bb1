#include "dsl/program/op_registry.h"

#include <algorithm>
#include <functional>
#include <type_traits>
#include <variant>

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

// The registry once built; until then, the ops and call targets registered so far.
OpRegistry* built_registry = nullptr;
struct Waiting {
  struct Op {
    OpDef op;
    OpDef (*make)() = nullptr;  // when set, `op` is empty: make() makes it
  };
  std::vector<Op> ops;
  std::vector<CallTarget> targets;
};
Waiting& WaitingRegistrations() {
  static auto* waiting = new Waiting;
  return *waiting;
}

}  // namespace

OpRegistration::OpRegistration(OpDef op) {
  if (built_registry) {
    built_registry->Add(std::move(op));
  } else {
    WaitingRegistrations().ops.push_back({std::move(op)});
  }
}

OpRegistration::OpRegistration(OpDef (*make)()) {
  if (built_registry) {
    built_registry->Add(make());
  } else {
    WaitingRegistrations().ops.push_back({OpDef{}, make});
  }
}

CallTargetRegistration::CallTargetRegistration(CallTarget target) {
  if (built_registry) {
    built_registry->AddCallTarget(std::move(target));
  } else {
    WaitingRegistrations().targets.push_back(std::move(target));
  }
}

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
    Waiting& waiting = WaitingRegistrations();
    for (Waiting::Op& op : waiting.ops)
      r->Add(op.make ? op.make() : std::move(op.op));
    for (CallTarget& target : waiting.targets)
      r->AddCallTarget(std::move(target));
    waiting = Waiting{};
    built_registry = r;
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

// `value` as its declaration reads it, for its range check: nullopt for a computation, which
// no declaration is.
std::optional<base::ParamValue> AsParamValue(const Attr& value) {
  switch (value.type()) {
    case AttrType::kInt:
      return base::ParamValue(value.AsInt());
    case AttrType::kFloat:
      return base::ParamValue(value.AsFloat());
    case AttrType::kBool:
      return base::ParamValue(value.AsBool());
    case AttrType::kString:
      return base::ParamValue(value.AsString());
    case AttrType::kDType:
      return base::ParamValue(DTypeName(value.AsDType()));
    case AttrType::kPrecision:
      return base::ParamValue(PrecisionName(value.AsPrecision()));
    case AttrType::kInts:
      return base::ParamValue(value.AsInts());
    case AttrType::kIntLists:
      return base::ParamValue(value.AsIntLists());
    case AttrType::kIntPairs:
      return base::ParamValue(value.AsIntPairs());
    case AttrType::kStrings:
      return base::ParamValue(value.AsStrings());
    case AttrType::kFloats:
      return base::ParamValue(value.AsFloats());
    case AttrType::kComputation:
      return std::nullopt;
  }
  return std::nullopt;
}

// Whether every value of `values` is a name `find` knows (FindDType, FindPrecision). Not by
// catching the Parse functions' errors: AttrSpec::Of runs in static initialisers (kernels'
// call targets), and a throw there is a start-up cost of every tpusim process.
template <typename Find>
bool AllKnown(const std::vector<std::string>& values, Find find) {
  for (const auto& value : values)
    if (!find(value)) return false;
  return !values.empty();
}

}  // namespace

AttrSpec AttrSpec::Computation(std::string name, std::string description) {
  AttrSpec spec;
  spec.name = std::move(name);
  spec.type = AttrType::kComputation;
  spec.description = std::move(description);
  return spec;
}

base::Param DTypeAttr(std::string name, std::string description) {
  std::vector<std::string> names;
  for (int dtype = 0; dtype <= static_cast<int>(DType::kF16); ++dtype)
    names.push_back(DTypeName(static_cast<DType>(dtype)));
  return base::Param::Enum(std::move(name), std::move(names), std::move(description));
}

base::Param PrecisionAttr(std::string name, std::string description) {
  std::vector<std::string> names;
  for (const Precision precision : {Precision::kDefault, Precision::kHigh, Precision::kHighest})
    names.push_back(PrecisionName(precision));
  return base::Param::Enum(std::move(name), std::move(names), std::move(description));
}

AttrSpec AttrSpec::Of(const base::Param& param, const std::string& name) {
  AttrSpec spec;
  spec.name = name.empty() ? param.name() : name;
  spec.description = param.description();
  spec.declared = param;
  std::function<Attr(const std::string&)> from_text = [](const std::string& text) {
    return Attr(text);
  };
  switch (param.type()) {
    case base::ParamType::kInt:
    case base::ParamType::kBytes:
      spec.type = AttrType::kInt;
      break;
    case base::ParamType::kDouble:
      spec.type = AttrType::kFloat;
      break;
    case base::ParamType::kBool:
      spec.type = AttrType::kBool;
      break;
    case base::ParamType::kString:
      break;
    case base::ParamType::kInts:
      spec.type = AttrType::kInts;
      break;
    case base::ParamType::kIntLists:
      spec.type = AttrType::kIntLists;
      break;
    case base::ParamType::kIntPairs:
      spec.type = AttrType::kIntPairs;
      break;
    case base::ParamType::kStrings:
      spec.type = AttrType::kStrings;
      break;
    case base::ParamType::kDoubles:
      spec.type = AttrType::kFloats;
      break;
    case base::ParamType::kEnum:
      if (AllKnown(param.values(), FindPrecision)) {
        spec.type = AttrType::kPrecision;
        from_text = [](const std::string& text) { return Attr(ParsePrecision(text)); };
      } else if (AllKnown(param.values(), FindDType)) {
        spec.type = AttrType::kDType;
        from_text = [](const std::string& text) { return Attr(ParseDType(text)); };
      }
      break;
  }
  if (const auto& value = param.default_value()) {
    std::string why;
    const auto canonical = param.Canonical(*value, why);
    if (canonical) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              spec.default_value = from_text(v);
            } else if constexpr (std::is_same_v<T, uint64_t>) {
              spec.default_value = Attr(static_cast<int64_t>(v));
            } else {
              spec.default_value = Attr(v);
            }
          },
          *canonical);
    }
  }
  spec.optional = !spec.default_value && !param.auto_text().empty();
  return spec;
}

namespace {

// The value of `spec` that `op` was given, checked against the declaration it comes from.
void CheckDeclared(const OpDef& op, const AttrSpec& spec, const Attr& value) {
  // A list without a range holds every value of its attribute type: such a value (a
  // constant's values may be large) is not copied to be checked.
  const bool list = spec.type == AttrType::kInts || spec.type == AttrType::kIntLists ||
                    spec.type == AttrType::kIntPairs || spec.type == AttrType::kStrings ||
                    spec.type == AttrType::kFloats;
  if (!spec.declared || (list && !spec.declared->min() && !spec.declared->max())) return;
  const auto given = AsParamValue(value);
  if (!given) return;
  std::string why;
  const auto canonical = spec.declared->Canonical(*given, why);
  std::string problem = canonical ? spec.declared->Disallowed(*canonical) : why;
  if (problem.empty()) return;
  ThrowOpError(op.name, "the attribute '" + spec.name + "' is " + value.ToString() + ", " +
                            problem + " (" + spec.description + ").");
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
    CheckDeclared(op, spec, *value);
    resolved.emplace(spec.name, *value);
  }
  return resolved;
}

}  // namespace tpusim::dsl
