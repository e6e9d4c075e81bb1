#pragma once

// The reference evaluator's operations on one device, by opcode. The interpreter
// (interpreter.h) runs them for every device in lockstep; collectives (collectives.h) and
// control flow, which need every device or run computations, are the interpreter's.

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/reference/value.h"

namespace tpusim::hlo::reference {

// Runs a called computation on one device.
using CallComputation = std::function<Value(int computation, std::vector<Value> arguments)>;

// A reducer computation (to_apply of reduce, reduce-window, scatter, all-reduce) applied to
// (accumulators..., values...). One that is a single binary elementwise instruction of its
// two parameters (add, maximum...) is applied directly instead of being run per element.
class Reducer {
 public:
  // `instruction` is the caller, named in errors.
  Reducer(const Module& module, const Instruction& instruction, int computation,
          CallComputation call);

  // Scalars: the new accumulators.
  std::vector<dsl::Array> Apply(const std::vector<dsl::Array>& accumulators,
                                const std::vector<dsl::Array>& values) const;
  // One accumulator and one value of the same shape, combined elementwise.
  dsl::Array Combine(const dsl::Array& accumulator, const dsl::Array& value) const;

 private:
  const Instruction* instruction_;
  int computation_;
  CallComputation call_;
  std::string binary_opcode_;  // the fast path, when not empty, for operands of fast_dtype_
  dsl::DType fast_dtype_ = dsl::DType::kF32;
  bool swapped_ = false;  // the instruction is op(parameter 1, parameter 0)
};

struct OpInput {
  const Module& module;
  const Computation& computation;
  const Instruction& instruction;
  std::vector<const Value*> operands;
  int64_t device = 0;  // XLA's global device id: replica * num_partitions + partition
  CallComputation call;

  // Operand i, which must be an array.
  const dsl::Array& Array(size_t i) const;
  // The instruction operand i is (for its printed shape and layout).
  const Instruction& OperandInstruction(size_t i) const;
  // The computation called through `attribute` (to_apply, calls...); fails when absent.
  int Called(const std::string& attribute) const;
  Reducer MakeReducer(const std::string& attribute) const;
  // An integer-list attribute, or `fallback` when it is absent.
  std::vector<int64_t> IntList(const std::string& attribute,
                               std::vector<int64_t> fallback = {}) const;
  // Fails unless the instruction has exactly `count` operands.
  void ExpectOperands(size_t count) const;
};

using DeviceOp = std::function<Value(const OpInput&)>;
using OpTable = std::unordered_map<std::string, DeviceOp>;

// Each file adds its opcodes.
void AddElementwiseOps(OpTable& table);
void AddShapeOps(OpTable& table);
void AddReduceOps(OpTable& table);
void AddGatherScatterOps(OpTable& table);
void AddDotOps(OpTable& table);

// Every per-device opcode.
const OpTable& DeviceOps();

// The elementwise binary operation `opcode` of a and b (each the size of `out` or a scalar)
// into `out`, or false when `opcode` is not one.
bool ApplyBinary(const std::string& opcode, const dsl::Array& a, const dsl::Array& b,
                 dsl::Array& out);

}  // namespace tpusim::hlo::reference
