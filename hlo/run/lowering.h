#pragma once

// One HLO instruction as a program op (dsl/program/op_registry.h): the op's registered name
// and attributes, built from the instruction's opcode and attributes. The interpreter runs
// every array instruction this way, top-level and (for numerics and work) inside fusions,
// so one table maps XLA's opcodes onto the program layer (docs/hlo.md, "Ops").
//
// Instructions with no program op (parameters, tuples, control flow, async pairs) are the
// interpreter's own; IsStructural says which.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dsl/program/attributes.h"
#include "hlo/module.h"
#include "hlo/run/device_map.h"

namespace tpusim::hlo::run {

// What lowering needs beyond the instruction.
struct LoweringContext {
  const Module& module;
  const DeviceMap& devices;
  // The program-layer form of computation `index` (to_apply, calls, comparator).
  std::function<dsl::ComputationPtr(int index)> computation;
  // custom-call: the kernel a tpu_custom_call runs, by the kernel's name (--kernel-map).
  const std::map<std::string, std::string>& kernel_map;
};

struct LoweredOp {
  std::string op;  // a registered program op
  dsl::Attributes attrs;
  std::string charged;  // how its time is charged, for hlo-info and the per-op table
};

// Parameters, constants-free bookkeeping (tuple, get-tuple-element, bitcast, after-all,
// add-dependency, opt-barrier), control flow (while, call, conditional) and the *-start,
// *-update, *-done halves of async pairs: run by the interpreter itself.
bool IsStructural(const std::string& opcode);

// The program op for `instruction`; throws HloError at the instruction for an opcode the
// model does not know (the interpreter decides whether --unknown-ops=free excuses it) or an
// attribute it cannot use. Collectives: the *-start form lowers like the synchronous one.
LoweredOp Lower(const Instruction& instruction, const LoweringContext& context);

// True when `opcode` names an op Lower knows (or the interpreter runs itself).
bool IsKnownOpcode(const std::string& opcode);

// The collective opcodes (synchronous names, e.g. "all-gather" for all-gather-start too).
bool IsCollective(const std::string& opcode);
// "all-gather" for "all-gather-start" / "all-gather-done"; the opcode itself otherwise.
std::string BaseOpcode(const std::string& opcode);

}  // namespace tpusim::hlo::run
