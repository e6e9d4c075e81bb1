#include "sim/model_registry.h"

#include <cmath>
#include <limits>

#include "base/text.h"
#include "sim/parameters.h"

namespace tpusim::sim {

namespace {

// A model parameter's default or range end, as the number the model reads.
double NumberOf(const std::optional<base::ParamValue>& value, double otherwise) {
  if (!value) return otherwise;
  return value->Number().value_or(otherwise);
}

}  // namespace

ModelParameters CheckModelParameters(
    const std::vector<base::Param>& declared,
    const google::protobuf::RepeatedPtrField<config::ModelParameter>& given,
    const std::string& what, const std::string& kind, const std::string& name) {
  ModelParameters parameters;
  for (const auto& param : declared)
    parameters[param.name()] = NumberOf(param.default_value(), 0);
  for (const auto& g : given) {
    const base::Param* param = nullptr;
    for (const auto& p : declared) {
      if (p.name() == g.name()) param = &p;
    }
    if (!param) {
      std::string known;
      for (const auto& p : declared)
        known += (known.empty() ? "'" : "', '") + p.name();
      throw Error(ErrorKind::kInvalidArgument, what + " gives parameter '" + g.name() + "' to " +
                                                   kind + " '" + name + "', which takes " +
                                                   (known.empty() ? "none" : known + "'") + ".");
    }
    const bool whole_only = param->type() != base::ParamType::kDouble;
    const double min = NumberOf(param->min(), -std::numeric_limits<double>::infinity());
    const double max = NumberOf(param->max(), std::numeric_limits<double>::infinity());
    const bool whole = g.value() == std::floor(g.value());
    if (!(g.value() >= min && g.value() <= max) || (whole_only && !whole)) {
      throw Error(ErrorKind::kInvalidArgument,
                  what + " sets '" + param->name() + "' of " + kind + " '" + name + "' to " +
                      base::NumberText(g.value()) + "; it must be " +
                      (whole_only ? "a whole number " : "") + "from " + base::NumberText(min) +
                      " to " + base::NumberText(max) + " (" + param->unit() + ").");
    }
    parameters[param->name()] = g.value();
  }
  return parameters;
}

}  // namespace tpusim::sim
