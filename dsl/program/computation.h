#pragma once

// A computation an op applies: what a reduce combines with (XLA's to_apply), what a fusion
// computes (calls), what a sort compares with (comparator). Ops take it as an attribute
// (AttrType::kComputation); the HLO interpreter (hlo/) implements it for HLO computations.

#include <memory>
#include <string>
#include <vector>

#include "base/work.h"
#include "dsl/array.h"

namespace tpusim::dsl {

// The work of one XLA op, as an op describes it (base/work.h): dots, vector operations, HBM
// bytes read and written. The model's compute model times it.
using XlaWork = base::XlaOp;

class Computation {
 public:
  virtual ~Computation() = default;
  virtual const std::string& name() const = 0;
  virtual std::vector<ShapeDtype> parameter_types() const = 0;
  virtual std::vector<ShapeDtype> result_types() const = 0;
  // Empty when every op inside has host numerics; otherwise the first op that has none
  // (its name and opcode), so a functional run can say why it cannot be one.
  virtual std::string missing_numerics() const = 0;
  // Host numerics: the computation applied to `args` (functional runs only).
  virtual std::vector<Array> Evaluate(const std::vector<Array>& args) const = 0;
  // The MXU and VPU work of one application, fused into one kernel: XlaWork's dots and
  // vector_ops (its HBM traffic is the caller's operands and results).
  virtual XlaWork Work() const = 0;
  // "add", "max", "min", "multiply", "and", "or" when the computation is that binary op
  // of its two scalar parameters (a reducer XLA recognises); empty otherwise.
  virtual std::string Reducer() const = 0;
};

using ComputationPtr = std::shared_ptr<const Computation>;

}  // namespace tpusim::dsl
