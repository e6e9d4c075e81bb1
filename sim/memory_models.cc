#include "sim/memory_models.h"

#include <cmath>

#include "base/errors.h"
#include "base/text.h"
#include "sim/parameters.h"

namespace tpusim::sim {

namespace {
std::map<std::string, MemoryModel>& Models() {
  static std::map<std::string, MemoryModel> models = [] {
    std::map<std::string, MemoryModel> m;
    m["bandwidth"] = MemoryModel{
        "bandwidth",
        "a chunk holds the port for bytes / bandwidth_bytes_per_s; reads and writes share it",
        {},
        nullptr};
    return m;
  }();
  return models;
}

std::string Names() {
  std::string names;
  for (const auto& [name, model] : Models())
    names += (names.empty() ? "'" : "', '") + name;
  return names + "'";
}
}  // namespace

void MemoryModels::Register(MemoryModel model) {
  const std::string name = model.name;
  if (!Models().emplace(name, std::move(model)).second) {
    throw Error(ErrorKind::kInvalidArgument,
                "memory model '" + name + "' is registered twice; give the second another name.");
  }
}

const MemoryModel* MemoryModels::Find(const std::string& name) {
  auto it = Models().find(name);
  return it == Models().end() ? nullptr : &it->second;
}

std::vector<const MemoryModel*> MemoryModels::All() {
  std::vector<const MemoryModel*> all;
  for (const auto& [name, model] : Models())
    all.push_back(&model);
  return all;
}

const MemoryModel& MemoryModels::Resolve(const config::MemoryConfig& config,
                                         const std::string& what, ModelParameters& parameters) {
  const std::string name = config.has_model() ? config.model() : "bandwidth";
  const MemoryModel* model = Find(name);
  if (!model) {
    throw Error(ErrorKind::kInvalidArgument, what + " asks for timing model '" + name +
                                                 "', which is not registered; the models are " +
                                                 Names() +
                                                 " (a plugin loaded with --load may add more).");
  }
  parameters.clear();
  for (const auto& spec : model->parameters)
    parameters[spec.name] = spec.default_value;
  for (const auto& given : config.parameter()) {
    const ModelParameterSpec* spec = nullptr;
    for (const auto& s : model->parameters) {
      if (s.name == given.name()) spec = &s;
    }
    if (!spec) {
      std::string known;
      for (const auto& s : model->parameters)
        known += (known.empty() ? "'" : "', '") + s.name;
      throw Error(ErrorKind::kInvalidArgument,
                  what + " gives parameter '" + given.name() + "' to timing model '" + name +
                      "', which takes " + (known.empty() ? "none" : known + "'") + ".");
    }
    const bool whole = given.value() == std::floor(given.value());
    if (!(given.value() >= spec->min && given.value() <= spec->max) || (spec->whole && !whole)) {
      throw Error(ErrorKind::kInvalidArgument,
                  what + " sets '" + spec->name + "' of timing model '" + name + "' to " +
                      base::NumberText(given.value()) + "; it must be " +
                      (spec->whole ? "a whole number " : "") + "from " +
                      base::NumberText(spec->min) + " to " + base::NumberText(spec->max) + " (" +
                      spec->unit + ").");
    }
    parameters[spec->name] = given.value();
  }
  return *model;
}

}  // namespace tpusim::sim
