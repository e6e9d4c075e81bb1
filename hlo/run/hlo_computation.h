#pragma once

// An HLO computation as the program layer's dsl::Computation: what a fusion computes, what
// a reduce or an all-reduce combines with, what a sort compares with. Its numerics run each
// instruction's program op (hlo/run/lowering.h) on host arrays, through the op's compute
// function; its work is the sum of its ops' MXU and VPU work (the caller adds HBM traffic).

#include <optional>
#include <string>
#include <vector>

#include "dsl/program/op_registry.h"
#include "hlo/module.h"
#include "hlo/run/lowering.h"

namespace tpusim::hlo::run {

class HloComputation final : public dsl::Computation {
 public:
  // For logical device `device` (partition-id inside a fusion is that device's).
  HloComputation(const Module& module, int index, const LoweringContext& context,
                 const dsl::Mesh& mesh, int device);

  const std::string& name() const override { return computation_.name; }
  std::vector<dsl::ShapeDtype> parameter_types() const override { return parameter_types_; }
  std::vector<dsl::ShapeDtype> result_types() const override { return result_types_; }
  std::string missing_numerics() const override { return missing_numerics_; }
  std::vector<dsl::Array> Evaluate(const std::vector<dsl::Array>& args) const override;
  dsl::XlaWork Work() const override { return work_; }
  std::string Reducer() const override { return reducer_; }

 private:
  struct Step {
    const dsl::OpDef* def = nullptr;  // null: structural (or not lowerable)
    dsl::Attributes attrs;
    std::vector<dsl::ShapeDtype> results;
    std::optional<dsl::ShapeDtype> array;  // the instruction's type, when an array
  };
  const hlo::Computation& computation_;
  const DeviceMap& devices_;
  int device_;
  std::vector<Step> steps_;
  std::vector<dsl::ShapeDtype> parameter_types_;
  std::vector<dsl::ShapeDtype> result_types_;
  std::string missing_numerics_;
  dsl::XlaWork work_;
  std::string reducer_;
};

// The types an HLO shape holds: one array, or each element of a (flat) tuple.
std::vector<dsl::ShapeDtype> LeafTypes(const Shape& shape, const std::string& what);

}  // namespace tpusim::hlo::run
