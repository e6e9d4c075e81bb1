#include "hlo/run/hlo_computation.h"

#include "hlo/run/types.h"

namespace tpusim::hlo::run {

namespace {

// The program op each binary reducer XLA recognises is.
std::string ReducerOf(const Computation& c) {
  if (c.parameters.size() != 2 || c.root < 0) return "";
  const Instruction& root = c.root_instruction();
  if (root.operands.size() != 2 || !root.shape.IsArray() || root.shape.rank() != 0) return "";
  const int a = root.operands[0], b = root.operands[1];
  const bool params = (a == c.parameters[0] && b == c.parameters[1]) ||
                      (a == c.parameters[1] && b == c.parameters[0]);
  if (!params) return "";
  if (root.opcode == "add") return "add";
  if (root.opcode == "maximum") return "max";
  if (root.opcode == "minimum") return "min";
  if (root.opcode == "multiply") return "multiply";
  if (root.opcode == "and") return "and";
  if (root.opcode == "or") return "or";
  return "";
}

}  // namespace

std::vector<dsl::ShapeDtype> LeafTypes(const Shape& shape, const std::string& what) {
  if (!shape.IsTuple()) return {TypeOf(shape, what)};
  std::vector<dsl::ShapeDtype> types;
  for (const Shape& element : shape.tuple_shapes)
    types.push_back(TypeOf(element, what));
  return types;
}

HloComputation::HloComputation(const Module& module, int index, const LoweringContext& context,
                               const dsl::Mesh& mesh, int device)
    : computation_(module.computations.at(static_cast<size_t>(index))),
      devices_(context.devices),
      device_(device) {
  for (int p : computation_.parameters) {
    const Instruction& param = computation_.instructions[static_cast<size_t>(p)];
    parameter_types_.push_back(TypeOf(param.shape, "parameter '" + param.name + "'"));
  }
  result_types_ =
      LeafTypes(computation_.root_instruction().shape, "the root of %" + computation_.name);
  reducer_ = ReducerOf(computation_);
  for (const Instruction& i : computation_.instructions) {
    Step step;
    if (i.shape.IsArray()) step.array = TypeOf(i.shape, "'" + i.name + "'");
    if (i.shape.IsArray() && !HasNumerics(i.shape.element_type) && missing_numerics_.empty()) {
      missing_numerics_ = "'" + i.name + "' is " + i.shape.ToString(false) +
                          ", an element type whose values tpusim does not model";
    }
    if (!IsStructural(i.opcode) && i.opcode != "partition-id" && i.opcode != "replica-id") {
      const LoweredOp lowered = Lower(i, context);
      step.def = &dsl::OpRegistry::Get().Find(lowered.op);
      step.attrs = dsl::ResolveAttributes(*step.def, lowered.attrs);
      std::vector<dsl::ShapeDtype> operands;
      for (int o : i.operands) {
        const Instruction& operand = computation_.instructions[static_cast<size_t>(o)];
        operands.push_back(TypeOf(operand.shape, "operand '" + operand.name + "'"));
      }
      const dsl::OpTyping typing{lowered.op, mesh, operands, step.attrs};
      step.results = step.def->shape(typing);
      const dsl::XlaWork work = step.def->work ? step.def->work(typing, step.results)
                                               : dsl::MemoryBoundWork(typing, step.results);
      work_.Add(work);
      if (!step.def->compute && missing_numerics_.empty()) {
        missing_numerics_ = "'" + i.name + "' (" + i.opcode + ") has no host numerics";
      }
      for (const auto& [name, attr] : step.attrs) {
        if (attr.type() != dsl::AttrType::kComputation || !missing_numerics_.empty()) continue;
        missing_numerics_ = attr.AsComputation().missing_numerics();
      }
      if (i.opcode == "constant" && step.attrs.count("values") == 0 && missing_numerics_.empty()) {
        missing_numerics_ = "the constant '" + i.name + "' was printed without its values";
      }
    }
    steps_.push_back(std::move(step));
  }
}

std::vector<dsl::Array> HloComputation::Evaluate(const std::vector<dsl::Array>& args) const {
  if (!missing_numerics_.empty()) {
    throw Error(ErrorKind::kInvalidArgument, "%" + computation_.name + " cannot be evaluated: " +
                                                 missing_numerics_ + "; run timing-only.");
  }
  // Each instruction's value: one array, or a tuple's arrays.
  std::vector<std::vector<dsl::Array>> values(computation_.instructions.size());
  for (size_t n = 0; n < computation_.instructions.size(); ++n) {
    const Instruction& i = computation_.instructions[n];
    const Step& step = steps_[n];
    auto operand = [&](size_t k) -> const std::vector<dsl::Array>& {
      return values[static_cast<size_t>(i.operands.at(k))];
    };
    std::vector<dsl::Array>& out = values[n];
    if (i.opcode == "parameter") {
      out = {args.at(static_cast<size_t>(i.parameter_number))};
    } else if (i.opcode == "tuple") {
      for (size_t k = 0; k < i.operands.size(); ++k)
        out.insert(out.end(), operand(k).begin(), operand(k).end());
    } else if (i.opcode == "get-tuple-element") {
      out = {operand(0).at(static_cast<size_t>(i.tuple_index))};
    } else if (i.opcode == "bitcast" || i.opcode == "opt-barrier" || i.opcode == "add-dependency") {
      out = operand(0);
      if (i.opcode == "bitcast" && step.array) {
        dsl::Array reshaped(step.array->shape, step.array->dtype);
        reshaped.bytes() = out.at(0).bytes();
        out = {reshaped};
      }
    } else if (i.opcode == "partition-id" || i.opcode == "replica-id") {
      dsl::Array id(dsl::Shape{}, step.array->dtype);
      id.SetFlat(0, static_cast<double>(i.opcode == "partition-id" ? devices_.PartitionOf(device_)
                                                                   : devices_.ReplicaOf(device_)));
      out = {id};
    } else if (step.def) {
      std::vector<dsl::Array> inputs;
      for (size_t k = 0; k < i.operands.size(); ++k)
        inputs.push_back(operand(k).at(0));
      out = step.def->compute(dsl::OpCompute{step.def->name, inputs, step.attrs, step.results});
    } else {
      throw Error(ErrorKind::kInvalidArgument, "%" + computation_.name + ": '" + i.name + "' (" +
                                                   i.opcode +
                                                   ") cannot run inside a called computation.");
    }
  }
  return values[static_cast<size_t>(computation_.root)];
}

}  // namespace tpusim::hlo::run
