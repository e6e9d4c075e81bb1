#pragma once

// What every pluggable model of the tree shares (a memory's timing model,
// sim/memory_models.h; a core's compute model, sim/compute_models.h): a registry by name,
// which a plugin may add to, and parameters each model declares as base::Params (base/param.h:
// an int for a count, which refuses 2.5 rather than truncating it, or a double; each with a
// default, a range, a unit and a description), checked against what a topology gives.

#include <google/protobuf/repeated_ptr_field.h>

#include <map>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/param.h"
#include "base/registry.h"
#include "topologies/topology.pb.h"

namespace tpusim::sim {

// Parameter values by name, every declared one present (given or defaulted).
using ModelParameters = std::map<std::string, double>;

// `given` checked against `declared` (numbers: int or double Params with a default), defaults
// filled in. An unknown name, or a value outside its
// range, is Error(kInvalidArgument) naming `what` (the memory or chip), the `kind` of model
// ("timing model") and its `name`.
ModelParameters CheckModelParameters(
    const std::vector<base::Param>& declared,
    const google::protobuf::RepeatedPtrField<config::ModelParameter>& given,
    const std::string& what, const std::string& kind, const std::string& name);

// Models of one kind by name (base/registry.h: a clash is recorded, not thrown, and reported
// when the registry is next used). `Model` has a `name` member.
template <typename Model>
class ModelRegistry {
 public:
  // `kind` names the models in errors ("memory model").
  ModelRegistry(std::string kind, Model built_in) : models_(std::move(kind)) {
    Register(std::move(built_in));
  }

  void Register(Model model) {
    const std::string name = model.name;
    models_.Add(name, std::move(model));
  }
  // Each throws Error(kInvalidArgument) naming the clashes when a name was registered twice.
  const Model* Find(const std::string& name) const { return models_.Find(name); }
  std::vector<const Model*> All() const { return models_.All(); }  // by name
  // The model called `name`; Error(kInvalidArgument) naming `what` (the memory or chip that
  // asks for it) and the registered models when there is none.
  const Model& Require(const std::string& name, const std::string& what) const {
    const Model* model = Find(name);
    if (!model) {
      throw Error(ErrorKind::kInvalidArgument, what + " asks for " + models_.kind() + " '" + name +
                                                   "', which is not registered; the models are " +
                                                   Names() +
                                                   " (a plugin loaded with --load may add more).");
    }
    return *model;
  }
  // "'a', 'b'", for errors.
  std::string Names() const { return models_.QuotedNames(); }

 private:
  base::Registry<Model> models_;
};

}  // namespace tpusim::sim
