#pragma once

// Program ops by name, so an XLA HLO interpreter and the typed C++ API drive the same
// code. An OpDef is one op: its name, a one-line summary, the schema of its attributes, a
// shape function (operand types + attributes -> result types, checking everything it
// can before any time passes) and a run function (does the op on one device: numerics
// in functional mode, time on the chip). The registry fills itself: array ops register
// from dsl/program/array_ops.cc, the lax collectives from kernels/lax/program_ops.cc.
//
// Kernels are callable by name too, as an HLO custom-call calls one: the op "pallas_call"
// with the attribute call_target_name naming a CallTarget (a kernel's pallas_call builder,
// registered from kernels/call_targets.cc) and the target's own attributes:
//   ctx.Call("pallas_call", {w}, {{"call_target_name", "all_gather_ring"}, {"axis_name", "x"}})
// runs exactly the call ctx.pallas_call(kernels::RingAllGatherCall("x", X, w.type()), {w})
// runs.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/param.h"
#include "base/registry.h"
#include "base/work.h"
#include "dsl/mesh.h"
#include "dsl/pallas_call.h"
#include "dsl/program/attributes.h"
#include "dsl/program/value.h"

namespace tpusim::dsl {

class ProgramContext;

// One attribute of an op's schema. Every attribute is a declared parameter (base/param.h),
// made by AttrSpec::Of, so an op's attributes, a kernel's parameters and a model's
// parameters are declared one way; the fields are what ResolveAttributes reads.
class AttrSpec {
 public:
  // A declared parameter as an attribute, named `name` (empty: the parameter's name). Ints
  // and sizes are ints, doubles floats, bools bools, the lists the lists of the same
  // elements (a double list a float list); an enum is a precision when its values are
  // precisions (PrecisionAttr), a dtype when they are dtypes (DTypeAttr), else a string, as
  // is a string. A default is the attribute's; a parameter left Auto() is an optional
  // attribute.
  static AttrSpec Of(const base::Param& param, const std::string& name = "");
  // The one attribute that is not a parameter: a computation (a fusion's body, a reducer),
  // which a program builds as a value of its own (dsl/program/computation.h), never text or
  // a number a user sets, so it has no default, range or text form. Always required.
  static AttrSpec Computation(std::string name, std::string description);

  std::string name;
  AttrType type = AttrType::kString;
  std::optional<Attr> default_value;  // unset: required, unless `optional`
  std::string description;
  bool optional = false;  // may be absent (no default): the op decides
  // The parameter declaration this attribute is (unset only for a computation): a value is
  // also checked against its range or allowed values.
  std::optional<base::Param> declared = std::nullopt;

 private:
  AttrSpec() = default;  // built only by Of and Computation
};

// An enum parameter over every dtype name (every precision name), which AttrSpec::Of reads
// as a dtype-valued (precision-valued) attribute.
base::Param DTypeAttr(std::string name, std::string description);
base::Param PrecisionAttr(std::string name, std::string description);

// What a shape function sees.
struct OpTyping {
  const std::string& op;
  const Mesh& mesh;
  const std::vector<ShapeDtype>& operands;
  const Attributes& attrs;  // every attribute of the schema, defaults filled in
};

// What a run function sees: the operands, and result values already allocated in HBM
// with the types the shape function gave.
struct OpRun {
  ProgramContext& ctx;
  const std::vector<Value>& operands;
  const std::vector<Value>& results;
  const Attributes& attrs;
};

// What a compute function sees: the operands' data and the results' types.
struct OpCompute {
  const std::string& op;
  const std::vector<Array>& operands;
  const Attributes& attrs;
  const std::vector<ShapeDtype>& results;
};

struct OpDef {
  std::string name;
  std::string summary;
  std::vector<AttrSpec> attributes;
  int min_operands = 1;
  int max_operands = 1;  // -1: any number
  std::function<std::vector<ShapeDtype>(const OpTyping&)> shape;
  // Most ops are described in two parts, and the context runs them (RunByParts): `compute`,
  // the op's host numerics (also what a fusion containing the op evaluates), and `work`,
  // what the op asks of the MXU, the VPU and HBM, which the time model turns into time.
  // An op without `compute` has no numerics: programs using it run timing-only.
  std::function<std::vector<Array>(const OpCompute&)> compute = nullptr;
  std::function<XlaWork(const OpTyping&, const std::vector<ShapeDtype>& results)> work = nullptr;
  // Ops that do more than numerics and work (collectives, which run kernels) run themselves.
  std::function<void(OpRun&)> run = nullptr;
  // Communication (the lax collectives): its time is exposed communication in the per-op
  // table, all of it when it runs synchronously.
  bool collective = false;
  // The step's name on the trace ("all_gather x"); unset: the op's name.
  std::function<std::string(const Attributes&)> describe = nullptr;
  // An op whose schema depends on the attributes given (pallas_call: call_target_name and
  // the attributes of the target it names). Unset: `attributes`.
  std::function<std::vector<AttrSpec>(const Attributes& given)> schema_for = nullptr;
  // An op that runs as a pallas_call: the call, built from the operand types and the
  // resolved attributes. The context runs it as ProgramContext::pallas_call runs a call
  // (input_output_aliases, its own scratch and semaphores), instead of `run`.
  std::function<PallasCall(const OpTyping&)> lower = nullptr;
};

// A kernel that programs call by name ("pallas_call" with call_target_name = `name`): its
// parameters as attributes, and the builder of its pallas_call for the operand types.
struct CallTarget {
  std::string name;
  std::string summary;
  std::vector<AttrSpec> attributes;
  std::function<PallasCall(const OpTyping&)> build;
  // When set, the attributes instead: derived, when first asked for, from the kernel's own
  // parameter declarations (kernels/call_targets.cc), which register from another static
  // initialiser, so that a kernel and its call by name are declared once.
  std::function<std::vector<AttrSpec>()> derived_attributes = nullptr;

  std::vector<AttrSpec> Attributes() const {
    return derived_attributes ? derived_attributes() : attributes;
  }
};

class OpRegistry {
 public:
  static OpRegistry& Get();
  // A taken name keeps its first op (or target); the clash is recorded, not thrown (targets
  // register from static initialisers, base/registry.h), and Find and Names report it.
  void Add(OpDef op);
  // Throws Error(kInvalidArgument) naming the known ops when `name` is not one.
  const OpDef& Find(const std::string& name) const;
  std::vector<std::string> Names() const;

  // The kernels "pallas_call" can name. Find throws Error(kInvalidArgument) naming the
  // known targets when `name` is not one.
  void AddCallTarget(CallTarget target);
  const CallTarget& FindCallTarget(const std::string& name) const;
  std::vector<std::string> CallTargetNames() const;

 private:
  base::Registry<OpDef> ops_{"program op"};
  base::Registry<CallTarget> targets_{"pallas_call target"};
};

// Ops and call targets register from static initialisers. The registry is built (the ops of
// the program language, then these) when first asked for, not then, so that a process that
// runs no program does not pay for it; until then they wait, in the order they registered.
struct OpRegistration {
  explicit OpRegistration(OpDef op);
  // The op made by `make` when the registry is built: its definition (attributes, defaults,
  // descriptions) is not even composed in a process that runs no program, where composing
  // the library's collectives was a sixth of the static initialisers' own work.
  explicit OpRegistration(OpDef (*make)());
};

struct CallTargetRegistration {
  explicit CallTargetRegistration(CallTarget target);
};

// `attrs` checked against `op`'s schema (OpDef::schema_for, else attributes; an unknown name or a
// wrong type is an error naming it and the schema), with defaults filled in. A string where a
// string list is expected is a one-element list, and an int where a float is expected is converted.
Attributes ResolveAttributes(const OpDef& op, const Attributes& attrs);

// Bytes of an array, and of a list of them.
double Bytes(const ShapeDtype& t);
double Bytes(const std::vector<ShapeDtype>& ts);
// The work of an op that reads `read` from HBM once and writes `written` once, and does
// nothing else.
XlaWork ReadWriteWork(const std::vector<ShapeDtype>& read, const std::vector<ShapeDtype>& written);
// The work of a memory-bound op: its operands read and its results written through HBM,
// one VPU operation per result element.
XlaWork MemoryBoundWork(const OpTyping& t, const std::vector<ShapeDtype>& results);

// Error(kInvalidArgument) "<op>: <message>", for shape functions.
[[noreturn]] void ThrowOpError(const std::string& op, const std::string& message);

// The array ops of dsl/program/array_ops.cc, and the op "pallas_call" (called once by
// OpRegistry::Get, so a static library cannot drop them).
void RegisterArrayOps(OpRegistry& registry);
void RegisterElementwiseOps(OpRegistry& registry);
void RegisterShapeOps(OpRegistry& registry);
void RegisterReduceOps(OpRegistry& registry);
void RegisterDotGeneralOps(OpRegistry& registry);
void RegisterIndexingOps(OpRegistry& registry);
void RegisterFusionOps(OpRegistry& registry);
void RegisterPallasCallOp(OpRegistry& registry);

}  // namespace tpusim::dsl
