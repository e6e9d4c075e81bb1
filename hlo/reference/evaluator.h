#pragma once

// tpusim's host reference evaluator of HLO modules: the independent numerical check of the
// simulator. It follows XLA's operation semantics with TPU numerics where they matter (an
// f32 dot at DEFAULT precision rounds its operands to bf16) and shares no code with the
// simulated program ops (dsl/program/, kernels/): a functional run compares every device's
// simulated results with this evaluation of the same module. docs/hlo.md lists what it
// evaluates.
//
//   const hlo::Module module = hlo::ParseModuleFile("mlp.hlo");
//   std::vector<std::vector<dsl::Array>> parameters(8);  // one list per device
//   ... parameters[d] = {x_d, w1_d, w2_d} ...
//   const auto results = hlo::reference::Evaluate(module, parameters);
//   // results[d]: device d's entry root (a tuple flattened, in order)

#include <vector>

#include "dsl/array.h"
#include "hlo/module.h"

namespace tpusim::hlo::reference {

// Evaluates `module` on every one of its devices at once (num_partitions x replica_count,
// by XLA's global device id = replica * num_partitions + partition), on the host.
// parameters[d][p] is device d's entry parameter p, of the per-device shape the module
// states. Returns, per device, the entry root's arrays (a tuple root flattened, in order;
// tokens dropped). Throws tpusim::Error (kInvalidArgument) naming the instruction, its
// opcode and file:line for what it cannot evaluate: an opcode it has no rule for, an
// element type it does not model (it models pred, s8, s32, u32, s64, f16, bf16 and f32), an
// elided constant, a while loop past 1,000,000 iterations, devices that disagree on a loop
// condition; and for parameters that do not match the module.
std::vector<std::vector<dsl::Array>> Evaluate(
    const Module& module, const std::vector<std::vector<dsl::Array>>& parameters);

}  // namespace tpusim::hlo::reference
