// The op "pallas_call": a registered kernel called by name, as an XLA HLO custom-call calls
// one (custom_call_target). Its attributes are call_target_name plus the attributes of the
// CallTarget it names; it lowers to the target's pallas_call, which the context runs as
// ProgramContext::pallas_call runs any call.

#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

void RegisterPallasCallOp(OpRegistry& registry) {
  const AttrSpec target = AttrSpec::Of(base::Param::String(
      "call_target_name", "the kernel to call: a registered pallas_call target"));
  OpDef def;
  def.name = "pallas_call";
  def.summary = "a registered kernel's pallas_call, named by call_target_name (an HLO custom-call)";
  def.attributes = {target};
  def.min_operands = 0;
  def.max_operands = -1;
  def.schema_for = [target](const Attributes& given) {
    std::vector<AttrSpec> schema = {target};
    const auto it = given.find(target.name);
    if (it == given.end() || it->second.type() != AttrType::kString) return schema;
    const std::vector<AttrSpec> called =
        OpRegistry::Get().FindCallTarget(it->second.AsString()).Attributes();
    schema.insert(schema.end(), called.begin(), called.end());
    return schema;
  };
  def.lower = [](const OpTyping& t) {
    return OpRegistry::Get().FindCallTarget(t.attrs.at("call_target_name").AsString()).build(t);
  };
  def.shape = [lower = def.lower](const OpTyping& t) { return lower(t).out_shape; };
  registry.Add(std::move(def));
}

}  // namespace tpusim::dsl
