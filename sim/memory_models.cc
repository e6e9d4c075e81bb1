#include "sim/memory_models.h"

namespace tpusim::sim {

namespace {
ModelRegistry<MemoryModel>& Models() {
  static ModelRegistry<MemoryModel> models(
      "timing model",
      MemoryModel{
          "bandwidth",
          "a chunk holds the port for bytes / bandwidth_bytes_per_s; reads and writes share it",
          {},
          nullptr});
  return models;
}
}  // namespace

void MemoryModels::Register(MemoryModel model) {
  Models().Register(std::move(model));
}

const MemoryModel* MemoryModels::Find(const std::string& name) {
  return Models().Find(name);
}

std::vector<const MemoryModel*> MemoryModels::All() {
  return Models().All();
}

const MemoryModel& MemoryModels::Resolve(const config::MemoryConfig& config,
                                         const std::string& what, ModelParameters& parameters) {
  const std::string name = config.has_model() ? config.model() : "bandwidth";
  const MemoryModel& model = Models().Require(name, what);
  parameters =
      CheckModelParameters(model.parameters, config.parameter(), what, "timing model", name);
  return model;
}

}  // namespace tpusim::sim
