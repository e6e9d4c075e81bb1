#pragma once

// An HLO module file as a registry entry: a program whose body is the module's entry
// computation, so `tpusim run step.hlo`, `compare` and `bench` treat it as any program.
//
// Its inputs are the entry parameters as global arrays (hlo/run/layouts.h), drawn by the
// one input generator (seeded random values); a functional run checks every device's
// results against a host evaluation of the module (hlo/evaluator.h) that shares no code with
// the simulated ops. A module with an op that has no numerics runs timing-only, and the
// report says why.

#include <memory>
#include <string>

#include "hlo/module.h"
#include "hlo/run/analysis.h"
#include "kernels/registry.h"

namespace tpusim::hlo::run {

// True when `name` is meant as an HLO file: it ends in ".hlo" or names an existing file.
bool IsHloPath(const std::string& name);

// The entry for the module in the file at `path` (parsed here; throws HloError when it does
// not parse). Its parameters: device_order, kernel_map, unknown_ops.
kernels::KernelInfo HloModuleEntry(const std::string& path);
kernels::KernelInfo HloModuleEntry(std::shared_ptr<const Module> module, const std::string& name);

// The plan and analysis of `module` for a run on `mesh` with the entry's parameters (what
// hlo-info prints and make() uses).
struct PreparedModule {
  std::shared_ptr<ModulePlan> plan;
  ModuleAnalysis analysis;
};
PreparedModule Prepare(std::shared_ptr<const Module> module, const dsl::Mesh& mesh,
                       const kernels::Params& params);

// The parameters an HLO entry declares.
std::vector<kernels::Param> HloModuleParams();

}  // namespace tpusim::hlo::run
