#pragma once

// What tpusim reads of a module before it runs it, shared by `tpusim hlo-info` and the run:
// whether it is partitioned, what each instruction will be charged as, which ops the model
// does not know, whether every op has numerics (a functional run) or not (timing-only, and
// why), how often each while loop runs, and which branch a conditional takes when only the
// data could tell (the slowest, in a timing-only run).

#include <map>
#include <string>
#include <vector>

#include "dsl/mesh.h"
#include "hlo/module.h"
#include "hlo/run/interpreter.h"

namespace tpusim::hlo::run {

struct OpUse {
  std::string opcode;
  int count = 0;
  std::string charged;  // how the time model charges it (hlo/run/lowering.h)
};

struct CollectiveUse {
  std::string name;  // the instruction
  std::string opcode;
  std::string groups;     // "2 groups of 4: {0,1,2,3}, {4,5,6,7}"
  std::string placement;  // "axis y", "axes (x, y)", "part of axes (x)"...
  std::string location;
};

struct ModuleAnalysis {
  std::vector<OpUse> ops;  // by opcode, over every computation the entry reaches
  int instructions = 0;
  std::vector<CollectiveUse> collectives;
  std::vector<std::string> unknown;  // "name (opcode) at FILE:LINE"
  std::string missing_numerics;      // empty: a functional run is possible
  std::vector<std::string> notes;    // what the report should say (slowest branches...)
};

// Throws HloError when the module has not been through SPMD partitioning: a Sharding or
// SPMDFullToShardShape custom call, or a sharding on an op other than the entry's
// parameters and root. The message says how to get the partitioned module.
void CheckPartitioned(const Module& module);

// Reads the module for a run on `mesh`: fills plan.trip_counts and plan.branch_taken, and
// returns what it found. Throws HloError for an op the model does not know unless
// plan.unknown_ops_free (it is then listed in `unknown`).
ModuleAnalysis Analyse(ModulePlan& plan, const dsl::Mesh& mesh);

}  // namespace tpusim::hlo::run
