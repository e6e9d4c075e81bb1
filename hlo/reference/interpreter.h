#pragma once

// Runs computations on a set of devices in lockstep: each instruction for every device
// before the next, so a collective sees every device's operand. Per-device operations come
// from ops.h, collectives from collectives.h; control flow (while, conditional, call,
// fusion, async-start) is here and in control_flow.cc.

#include <cstdint>
#include <vector>

#include "hlo/reference/value.h"

namespace tpusim::hlo::reference {

// A while loop that runs more iterations than this is refused (a condition that never
// turns false would otherwise hang the check).
inline constexpr int64_t kMaxWhileIterations = 1000000;

class Interpreter {
 public:
  explicit Interpreter(const Module& module) : module_(module) {}

  // Runs computation `computation` on `devices` (global device ids), with arguments[slot]
  // the parameters of device devices[slot]; returns the root's value on each.
  std::vector<Value> Run(int computation, const std::vector<int64_t>& devices,
                         std::vector<std::vector<Value>> arguments) const;
  Value RunOnDevice(int computation, int64_t device, std::vector<Value> arguments) const;

 private:
  using Operands = std::vector<std::vector<const Value*>>;  // [slot][operand]

  std::vector<Value> Evaluate(const Computation& computation, const Instruction& instruction,
                              const std::vector<int64_t>& devices, const Operands& operands) const;

  // control_flow.cc
  std::vector<Value> While(const Instruction& instruction, const std::vector<int64_t>& devices,
                           const Operands& operands) const;
  std::vector<Value> Conditional(const Instruction& instruction,
                                 const std::vector<int64_t>& devices,
                                 const Operands& operands) const;
  // call, fusion and async-start: the called computation on the operands.
  std::vector<Value> Call(const Instruction& instruction, const std::vector<int64_t>& devices,
                          const Operands& operands) const;

  const Module& module_;
};

}  // namespace tpusim::hlo::reference
