// A plugin whose memory model, compute model and pallas_call target take names the library
// already has. Before base/registry.h, the first of these threw from a static initialiser
// inside dlopen and terminated tpusim; now loading it fails with one message naming each.

#include "dsl/program/op_registry.h"
#include "sim/compute_models.h"
#include "sim/memory_models.h"

namespace {

tpusim::sim::MemoryModel RowBuffer() {
  tpusim::sim::MemoryModel model;
  model.name = "row_buffer";
  model.summary = "a second row_buffer";
  return model;
}

tpusim::sim::ComputeModelInfo Roofline() {
  tpusim::sim::ComputeModelInfo model;
  model.name = "roofline";
  model.summary = "a second roofline";
  return model;
}

tpusim::dsl::CallTarget Matmul() {
  tpusim::dsl::CallTarget target;
  target.name = "matmul";
  target.summary = "a second matmul";
  return target;
}

const tpusim::sim::MemoryModelRegistration memory_model(RowBuffer());
const tpusim::sim::ComputeModelRegistration compute_model(Roofline());
const tpusim::dsl::CallTargetRegistration call_target(Matmul());

}  // namespace
