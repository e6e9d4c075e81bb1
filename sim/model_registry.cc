#include "sim/model_registry.h"

#include "sim/parameters.h"

namespace tpusim::sim {

ModelParameters CheckModelParameters(
    const std::vector<ModelParameterSpec>& specs,
    const google::protobuf::RepeatedPtrField<config::ModelParameter>& given,
    const std::string& what, const std::string& kind, const std::string& name) {
  ModelParameters parameters;
  for (const auto& spec : specs)
    parameters[spec.name] = spec.default_value;
  for (const auto& g : given) {
    const ModelParameterSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == g.name()) spec = &s;
    }
    if (!spec) {
      std::string known;
      for (const auto& s : specs)
        known += (known.empty() ? "'" : "', '") + s.name;
      throw Error(ErrorKind::kInvalidArgument, what + " gives parameter '" + g.name() + "' to " +
                                                   kind + " '" + name + "', which takes " +
                                                   (known.empty() ? "none" : known + "'") + ".");
    }
    if (!(g.value() >= spec->min && g.value() <= spec->max)) {
      throw Error(ErrorKind::kInvalidArgument,
                  what + " sets '" + spec->name + "' of " + kind + " '" + name + "' to " +
                      FormatNumber(g.value()) + "; it must be from " + FormatNumber(spec->min) +
                      " to " + FormatNumber(spec->max) + " (" + spec->unit + ").");
    }
    parameters[spec->name] = g.value();
  }
  return parameters;
}

}  // namespace tpusim::sim
