#include "hlo/reference/evaluator.h"

#include "hlo/reference/interpreter.h"

namespace tpusim::hlo::reference {

namespace {

[[noreturn]] void FailParameters(const Module& module, const std::string& sentence) {
  throw Error(ErrorKind::kInvalidArgument,
              "The parameters given for module " + module.name + " do not fit it: " + sentence);
}

// Device d's arguments as values, checked against the entry's parameters.
std::vector<Value> Arguments(const Module& module, const std::vector<dsl::Array>& arrays,
                             int64_t device) {
  const Computation& entry = module.entry_computation();
  const std::string on = "device " + std::to_string(device);
  if (arrays.size() != entry.parameters.size()) {
    FailParameters(module, on + " has " + std::to_string(arrays.size()) +
                               " arrays, but the entry computation %" + entry.name + " takes " +
                               std::to_string(entry.parameters.size()) + " parameters.");
  }
  std::vector<Value> arguments;
  for (size_t p = 0; p < arrays.size(); ++p) {
    const Instruction& parameter = entry.instructions[static_cast<size_t>(entry.parameters[p])];
    if (!parameter.shape.IsArray()) {
      Fail(parameter, "tuple and token entry parameters are not modelled; pass arrays");
    }
    CheckModelled(parameter, parameter.shape);
    const dsl::Array& array = arrays[p];
    const dsl::DType dtype = *ModelledDType(parameter.shape.element_type);
    if (array.dtype() != dtype || array.shape() != parameter.shape.dimensions ||
        !array.has_data()) {
      FailParameters(module,
                     on + "'s parameter " + std::to_string(p) + " (%" + parameter.name + ") is " +
                         Describe(array) + (array.has_data() ? "" : " without data") +
                         ", but the module states " + parameter.shape.ToString(false) + ".");
    }
    arguments.push_back(Value::Of(array));
  }
  return arguments;
}

}  // namespace

std::vector<std::vector<dsl::Array>> Evaluate(
    const Module& module, const std::vector<std::vector<dsl::Array>>& parameters) {
  const int64_t devices = module.replica_count * module.num_partitions;
  if (devices <= 0 || static_cast<int64_t>(parameters.size()) != devices) {
    FailParameters(module, "it runs on " + std::to_string(devices) + " devices (" +
                               std::to_string(module.replica_count) + " replicas x " +
                               std::to_string(module.num_partitions) +
                               " partitions), but parameters were given for " +
                               std::to_string(parameters.size()) +
                               "; give one list of entry parameters per device.");
  }
  std::vector<int64_t> ids;
  std::vector<std::vector<Value>> arguments;
  for (int64_t d = 0; d < devices; ++d) {
    ids.push_back(d);
    arguments.push_back(Arguments(module, parameters[static_cast<size_t>(d)], d));
  }
  const Interpreter interpreter(module);
  const std::vector<Value> roots = interpreter.Run(module.entry, ids, std::move(arguments));
  std::vector<std::vector<dsl::Array>> results(roots.size());
  for (size_t d = 0; d < roots.size(); ++d)
    Flatten(roots[d], results[d]);
  return results;
}

}  // namespace tpusim::hlo::reference
