#include "hlo/reference/interpreter.h"

#include "hlo/reference/collectives.h"
#include "hlo/reference/ops.h"

namespace tpusim::hlo::reference {

std::vector<Value> Interpreter::Run(int computation, const std::vector<int64_t>& devices,
                                    std::vector<std::vector<Value>> arguments) const {
  const Computation& c = module_.computations.at(static_cast<size_t>(computation));
  for (const std::vector<Value>& slot_arguments : arguments) {
    if (slot_arguments.size() != c.parameters.size()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "The computation %" + c.name + " (" + c.location.ToString() + ") takes " +
                      std::to_string(c.parameters.size()) + " parameters but is called with " +
                      std::to_string(slot_arguments.size()) + ".");
    }
  }
  const size_t count = c.instructions.size();
  // Each value is dropped after its last use (the root is kept).
  std::vector<size_t> last_use(count, 0);
  for (size_t i = 0; i < count; ++i)
    for (const int operand : c.instructions[i].operands)
      last_use[static_cast<size_t>(operand)] = i;
  std::vector<std::vector<Value>> values(count);
  for (size_t i = 0; i < count; ++i) {
    const Instruction& instruction = c.instructions[i];
    CheckModelled(instruction, instruction.shape);
    if (instruction.opcode == "parameter") {
      values[i].resize(devices.size());
      for (size_t s = 0; s < devices.size(); ++s) {
        values[i][s] =
            std::move(arguments[s].at(static_cast<size_t>(instruction.parameter_number)));
        CheckResult(instruction, values[i][s]);  // the caller passed what the callee takes
      }
      continue;
    }
    Operands operands(devices.size());
    for (size_t s = 0; s < devices.size(); ++s)
      for (const int operand : instruction.operands)
        operands[s].push_back(&values[static_cast<size_t>(operand)][s]);
    values[i] = Evaluate(c, instruction, devices, operands);
    for (const Value& value : values[i])
      CheckResult(instruction, value);
    for (const int operand : instruction.operands) {
      const auto o = static_cast<size_t>(operand);
      if (last_use[o] == i && operand != c.root) values[o].clear();
    }
  }
  return std::move(values[static_cast<size_t>(c.root)]);
}

Value Interpreter::RunOnDevice(int computation, int64_t device,
                               std::vector<Value> arguments) const {
  std::vector<std::vector<Value>> slots;
  slots.push_back(std::move(arguments));
  return std::move(Run(computation, {device}, std::move(slots))[0]);
}

std::vector<Value> Interpreter::Evaluate(const Computation& computation,
                                         const Instruction& instruction,
                                         const std::vector<int64_t>& devices,
                                         const Operands& operands) const {
  const std::string& opcode = instruction.opcode;
  if (IsCollective(opcode)) {
    CollectiveInput in{module_, instruction, devices, operands,
                       [this](int64_t device, int computation, std::vector<Value> arguments) {
                         return RunOnDevice(computation, device, std::move(arguments));
                       }};
    return EvaluateCollective(in);
  }
  if (opcode == "while") return While(instruction, devices, operands);
  if (opcode == "conditional") return Conditional(instruction, devices, operands);
  if (opcode == "call" || opcode == "fusion" || opcode == "async-start")
    return Call(instruction, devices, operands);
  const auto found = DeviceOps().find(opcode);
  if (found == DeviceOps().end()) {
    Fail(instruction, "the reference evaluator has no rule for the opcode '" + opcode +
                          "' (docs/hlo.md lists the opcodes it evaluates)");
  }
  std::vector<Value> results(devices.size());
  for (size_t s = 0; s < devices.size(); ++s) {
    const int64_t device = devices[s];
    const OpInput in{module_,
                     computation,
                     instruction,
                     operands[s],
                     device,
                     [this, device](int called, std::vector<Value> arguments) {
                       return RunOnDevice(called, device, std::move(arguments));
                     }};
    results[s] = found->second(in);
  }
  return results;
}

}  // namespace tpusim::hlo::reference
