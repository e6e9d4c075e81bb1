#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

const dsl::Array& OpInput::Array(size_t i) const {
  if (i >= operands.size()) {
    Fail(instruction, "it has " + std::to_string(operands.size()) + " operands; operand " +
                          std::to_string(i) + " is missing");
  }
  if (operands[i]->is_tuple)
    Fail(instruction, "operand " + std::to_string(i) + " should be an array");
  return operands[i]->array;
}

const Instruction& OpInput::OperandInstruction(size_t i) const {
  return computation.instructions.at(static_cast<size_t>(instruction.operands.at(i)));
}

int OpInput::Called(const std::string& attribute) const {
  const int called = instruction.Called(attribute);
  if (called < 0) Fail(instruction, "it calls no computation through " + attribute);
  return called;
}

Reducer OpInput::MakeReducer(const std::string& attribute) const {
  return Reducer(module, instruction, Called(attribute), call);
}

std::vector<int64_t> OpInput::IntList(const std::string& attribute,
                                      std::vector<int64_t> fallback) const {
  const Attribute* found = instruction.FindAttribute(attribute);
  return found ? DecodeIntList(*found) : fallback;
}

void OpInput::ExpectOperands(size_t count) const {
  if (operands.size() != count) {
    Fail(instruction, "it has " + std::to_string(operands.size()) + " operands where " +
                          instruction.opcode + " takes " + std::to_string(count));
  }
}

Reducer::Reducer(const Module& module, const Instruction& instruction, int computation,
                 CallComputation call)
    : instruction_(&instruction), computation_(computation), call_(std::move(call)) {
  const Computation& c = module.computations.at(static_cast<size_t>(computation));
  const Instruction& root = c.root_instruction();
  if (c.parameters.size() != 2 || root.operands.size() != 2 || !root.shape.IsArray() ||
      root.shape.rank() != 0)
    return;
  const int p0 = c.parameters[0], p1 = c.parameters[1];
  if (root.operands[0] == p0 && root.operands[1] == p1) {
    binary_opcode_ = root.opcode;
  } else if (root.operands[0] == p1 && root.operands[1] == p0) {
    binary_opcode_ = root.opcode;
    swapped_ = true;
  }
  // Only opcodes ApplyBinary knows, on parameters of the root's type, take the fast path.
  for (const int p : {p0, p1}) {
    const Shape& shape = c.instructions[static_cast<size_t>(p)].shape;
    if (!shape.IsArray() || shape.element_type != root.shape.element_type) binary_opcode_.clear();
  }
  if (!binary_opcode_.empty() && ModelledDType(root.shape.element_type)) {
    fast_dtype_ = *ModelledDType(root.shape.element_type);
    dsl::Array probe = NewArray(fast_dtype_, {});
    if (!ApplyBinary(binary_opcode_, probe, probe, probe)) binary_opcode_.clear();
  } else {
    binary_opcode_.clear();
  }
}

std::vector<dsl::Array> Reducer::Apply(const std::vector<dsl::Array>& accumulators,
                                       const std::vector<dsl::Array>& values) const {
  if (!binary_opcode_.empty() && accumulators.size() == 1 &&
      accumulators[0].dtype() == fast_dtype_ && values[0].dtype() == fast_dtype_) {
    return {Combine(accumulators[0], values[0])};
  }
  std::vector<Value> arguments;
  for (const dsl::Array& a : accumulators)
    arguments.push_back(Value::Of(a));
  for (const dsl::Array& v : values)
    arguments.push_back(Value::Of(v));
  Value result = call_(computation_, std::move(arguments));
  std::vector<dsl::Array> out;
  Flatten(result, out);
  bool fits = out.size() == accumulators.size();
  for (size_t k = 0; fits && k < out.size(); ++k)
    fits = out[k].size() == 1 && out[k].dtype() == accumulators[k].dtype();
  if (!fits)
    Fail(*instruction_, "its reducer should return one scalar per accumulator, of its type");
  return out;
}

dsl::Array Reducer::Combine(const dsl::Array& accumulator, const dsl::Array& value) const {
  dsl::Array out = NewArray(accumulator.dtype(), accumulator.shape());
  if (!binary_opcode_.empty() && accumulator.dtype() == fast_dtype_ &&
      value.dtype() == fast_dtype_) {
    ApplyBinary(binary_opcode_, swapped_ ? value : accumulator, swapped_ ? accumulator : value,
                out);
    return out;
  }
  for (int64_t i = 0; i < out.size(); ++i) {
    const Value result =
        call_(computation_, {Value::Of(ElementOf(accumulator, i)), Value::Of(ElementOf(value, i))});
    std::vector<dsl::Array> flat;
    Flatten(result, flat);
    if (flat.size() != 1 || flat[0].size() != 1 || flat[0].dtype() != out.dtype())
      Fail(*instruction_, "its reducer should return one scalar of its operand's type");
    CopyElement(flat[0], 0, out, i);
  }
  return out;
}

const OpTable& DeviceOps() {
  static const OpTable table = [] {
    OpTable t;
    AddElementwiseOps(t);
    AddShapeOps(t);
    AddReduceOps(t);
    AddGatherScatterOps(t);
    AddDotOps(t);
    return t;
  }();
  return table;
}

}  // namespace tpusim::hlo::reference
