#pragma once

// Runs an HLO module's entry computation on one device of a program (dsl/program): every
// instruction in order as one step on the device's core, named after the instruction, its
// JAX op_name on the trace. Array instructions run as their program op (hlo/run/lowering.h);
// the interpreter itself handles parameters, tuples, bitcasts, control flow (while, call,
// conditional) and async pairs (*-start / *-done, async-start / async-done, copy-start /
// copy-done), which overlap the steps issued between their halves. It owns no timing: every
// nanosecond comes from the ops it runs.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dsl/program/context.h"
#include "hlo/module.h"
#include "hlo/run/device_map.h"
#include "hlo/run/lowering.h"

namespace tpusim::hlo::run {

// What every device's interpreter shares: the module, where its devices run, and what the
// run was asked to do with what the model does not know.
struct ModulePlan {
  std::shared_ptr<const Module> module;
  std::shared_ptr<const DeviceMap> devices;
  std::map<std::string, std::string> kernel_map;  // tpu_custom_call kernel -> registered kernel
  bool unknown_ops_free = false;                  // --unknown-ops=free
  // While loops' trip counts, by (computation, instruction), when XLA states them or the
  // condition makes them evident; -1 when only the data can tell.
  std::map<std::pair<int, int>, int64_t> trip_counts;
  // A conditional's branch in a timing-only run when only the data could tell: its constant
  // selector's, else the slowest by the roofline (the report says which).
  std::map<const Instruction*, int> branch_taken;
};

// The flattened results of the entry computation's root on `ctx`'s device.
std::vector<dsl::Value> RunEntry(const ModulePlan& plan, dsl::ProgramContext& ctx,
                                 const std::vector<dsl::Value>& parameters);

}  // namespace tpusim::hlo::run
