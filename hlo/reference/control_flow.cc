// while, conditional, call, fusion and async-start, run on every device in lockstep so that
// collectives inside them see all their group: a while loop's devices must agree on every
// condition; a conditional runs each branch on the devices that take it.

#include <map>

#include "hlo/reference/interpreter.h"

namespace tpusim::hlo::reference {

namespace {

const Value& Only(const std::vector<const Value*>& operands, const Instruction& instruction) {
  if (operands.size() != 1) Fail(instruction, "it takes one operand");
  return *operands[0];
}

bool PredicateOf(const Value& value, const Instruction& instruction, const char* what) {
  if (value.is_tuple || value.array.dtype() != dsl::DType::kBool || value.array.size() != 1)
    Fail(instruction, std::string(what) + " should be a pred scalar");
  return GetInt(value.array, 0) != 0;
}

int Called(const Instruction& instruction, const char* attribute) {
  const int called = instruction.Called(attribute);
  if (called < 0) Fail(instruction, std::string("it calls no computation through ") + attribute);
  return called;
}

}  // namespace

std::vector<Value> Interpreter::While(const Instruction& instruction,
                                      const std::vector<int64_t>& devices,
                                      const Operands& operands) const {
  const int condition = Called(instruction, "condition"), body = Called(instruction, "body");
  std::vector<Value> state;
  for (const std::vector<const Value*>& slot : operands)
    state.push_back(Only(slot, instruction));
  for (int64_t iteration = 0;; ++iteration) {
    std::vector<std::vector<Value>> arguments;
    for (const Value& value : state)
      arguments.push_back({value});
    const std::vector<Value> go = Run(condition, devices, std::move(arguments));
    const bool first = PredicateOf(go[0], instruction, "its condition's result");
    for (size_t s = 1; s < devices.size(); ++s) {
      if (PredicateOf(go[s], instruction, "its condition's result") != first) {
        Fail(instruction, "its condition is " + std::string(first ? "true" : "false") +
                              " on device " + std::to_string(devices[0]) + " but not on device " +
                              std::to_string(devices[s]) + " at iteration " +
                              std::to_string(iteration) +
                              "; devices that run one program must loop alike");
      }
    }
    if (!first) return state;
    if (iteration >= kMaxWhileIterations) {
      Fail(instruction, "it ran " + std::to_string(kMaxWhileIterations) +
                            " iterations and its condition is still true (a loop that never "
                            "ends, or one too long to check on the host)");
    }
    arguments.clear();
    for (Value& value : state)
      arguments.push_back({std::move(value)});
    state = Run(body, devices, std::move(arguments));
  }
}

std::vector<Value> Interpreter::Conditional(const Instruction& instruction,
                                            const std::vector<int64_t>& devices,
                                            const Operands& operands) const {
  std::vector<int> branches;
  for (const CalledComputation& called : instruction.called_computations)
    if (called.attribute == "branch_computations") branches.push_back(called.computation);
  const bool by_predicate = branches.empty();
  if (by_predicate)
    branches = {Called(instruction, "true_computation"), Called(instruction, "false_computation")};
  if (operands.empty()) return {};
  if (operands[0].size() != branches.size() + 1)
    Fail(instruction, "it needs its selector and one operand per branch");
  // Each device's branch: pred true -> the first; an index out of range -> the last.
  std::map<size_t, std::vector<size_t>> slots_of_branch;
  for (size_t s = 0; s < devices.size(); ++s) {
    const Value& selector = *operands[s][0];
    size_t branch = 0;
    if (by_predicate) {
      branch = PredicateOf(selector, instruction, "its selector") ? 0 : 1;
    } else {
      if (selector.is_tuple || selector.array.size() != 1 || IsFloat(selector.array.dtype()))
        Fail(instruction, "its branch index should be an integer scalar");
      const int64_t index = GetInt(selector.array, 0);
      branch = index < 0 || index >= static_cast<int64_t>(branches.size())
                   ? branches.size() - 1
                   : static_cast<size_t>(index);
    }
    slots_of_branch[branch].push_back(s);
  }
  std::vector<Value> results(devices.size());
  for (const auto& [branch, slots] : slots_of_branch) {
    std::vector<int64_t> branch_devices;
    std::vector<std::vector<Value>> arguments;
    for (const size_t s : slots) {
      branch_devices.push_back(devices[s]);
      arguments.push_back({*operands[s][branch + 1]});
    }
    std::vector<Value> values = Run(branches[branch], branch_devices, std::move(arguments));
    for (size_t i = 0; i < slots.size(); ++i)
      results[slots[i]] = std::move(values[i]);
  }
  return results;
}

std::vector<Value> Interpreter::Call(const Instruction& instruction,
                                     const std::vector<int64_t>& devices,
                                     const Operands& operands) const {
  const bool async = instruction.opcode == "async-start";
  const int called = Called(instruction, instruction.opcode == "fusion" ? "calls"
                                         : async                        ? "calls"
                                                                        : "to_apply");
  std::vector<std::vector<Value>> arguments;
  for (const std::vector<const Value*>& slot : operands) {
    arguments.emplace_back();
    for (const Value* operand : slot)
      arguments.back().push_back(*operand);
  }
  std::vector<Value> results = Run(called, devices, arguments);
  if (!async) return results;
  // async-start's value is ((operands...), result, contexts...); async-done takes element 1.
  for (size_t s = 0; s < devices.size(); ++s) {
    Value start = Zeros(instruction, instruction.shape);
    if (!start.is_tuple || start.elements.size() < 2)
      Fail(instruction, "its result should be a tuple ((operands), result, ...)");
    start.elements[0] = Value::Tuple(std::move(arguments[s]));
    start.elements[1] = std::move(results[s]);
    results[s] = std::move(start);
  }
  return results;
}

}  // namespace tpusim::hlo::reference
