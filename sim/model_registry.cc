#include "sim/model_registry.h"

#include <cmath>

#include "base/text.h"
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
    const bool whole = g.value() == std::floor(g.value());
    if (!(g.value() >= spec->min && g.value() <= spec->max) || (spec->whole && !whole)) {
      throw Error(ErrorKind::kInvalidArgument,
                  what + " sets '" + spec->name + "' of " + kind + " '" + name + "' to " +
                      base::NumberText(g.value()) + "; it must be " +
                      (spec->whole ? "a whole number " : "") + "from " +
                      base::NumberText(spec->min) + " to " + base::NumberText(spec->max) + " (" +
                      spec->unit + ").");
    }
    parameters[spec->name] = g.value();
  }
  return parameters;
}

}  // namespace tpusim::sim
