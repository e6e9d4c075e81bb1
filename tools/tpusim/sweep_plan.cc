#include "tools/tpusim/sweep_plan.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "base/text.h"
#include "tools/tpusim/cli.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace po = boost::program_options;

namespace {

constexpr size_t kMaxPoints = 1000000;

// "--param bytes=abc: " before a message about that value.
std::string About(const std::string& name, const std::string& value) {
  return "--param " + name + "=" + value + ": ";
}

std::string RunOptionList() {
  std::string list;
  for (const RunOptionName& option : RunOptionNames())
    base::AppendListItem(list, ", ", option.name);
  return list;
}

[[noreturn]] void Unknown(const std::string& command, const std::string& name,
                          const std::vector<const kernels::KernelInfo*>& infos) {
  std::string message = "--param " + name + ": ";
  std::string takers;
  for (const auto* info : infos) {
    if (info->FindParam(name)) base::AppendListItem(takers, ", ", info->name);
  }
  for (const auto* info : infos) {
    if (info->FindParam(name)) continue;
    std::string declared;
    for (const auto& param : info->params)
      base::AppendListItem(declared, ", ", param.name());
    message += info->name + " takes no parameter '" + name + "'" +
               (declared.empty() ? " (it takes none)" : " (it takes " + declared + ")") + "; ";
    break;
  }
  if (!takers.empty()) message += "only " + takers + " of the entries take it; ";
  throw UsageError(command, message + "sweep a parameter every entry takes, a run option (" +
                                RunOptionList() + ") or the topology (--topology A,B).");
}

// Checks every value of entry parameter `d` by binding it, with the other swept entry
// parameters at their first value, for each entry; returns the values as numbers where
// the parameter is an int or a size (4K becomes 4096).
std::vector<std::string> CheckEntryValues(const std::string& command,
                                          const std::vector<SweepPlan::Dimension>& dims, size_t d,
                                          const std::vector<const kernels::KernelInfo*>& infos,
                                          const kernels::ParamValues& given) {
  const SweepAxis& axis = dims[d].axis;
  std::vector<std::string> normalised;
  for (const std::string& value : axis.values) {
    std::string plain = value;
    for (const auto* info : infos) {
      kernels::ParamValues values = given;
      for (size_t other = 0; other < dims.size(); ++other) {
        const bool entry_param =
            !dims[other].flag.empty() && info->FindParam(dims[other].axis.name);
        if (other != d && entry_param)
          values.insert_or_assign(dims[other].axis.name, dims[other].axis.values.front());
      }
      values.insert_or_assign(axis.name, value);
      try {
        const kernels::Params bound = info->Bind(values);
        if (info != infos.front()) continue;
        if (bound.TypeOf(axis.name) == kernels::ParamType::kInt)
          plain = std::to_string(bound.Int(axis.name));
        if (bound.TypeOf(axis.name) == kernels::ParamType::kBytes)
          plain = std::to_string(bound.Bytes(axis.name));
      } catch (const kernels::ParamError& e) {
        const auto& named = e.params();
        if (std::find(named.begin(), named.end(), axis.name) == named.end()) throw;
        throw UsageError(command, About(axis.name, value) + e.what());
      }
    }
    normalised.push_back(plain);
  }
  return normalised;
}

void CheckRunOptionValues(const std::string& command, const SweepPlan::Dimension& dim) {
  for (const std::string& value : dim.axis.values) {
    if (dim.presence) {
      if (value != "true" && value != "false") {
        throw UsageError(command, About(dim.axis.name, value) + dim.flag +
                                      " is a flag without a value; sweep it as " + dim.axis.name +
                                      "=true,false.");
      }
      continue;
    }
    try {
      ParseRunFlags(command, {dim.flag + "=" + value});
    } catch (const UsageError& e) {
      throw UsageError(command, About(dim.axis.name, value) + e.what());
    }
  }
}

}  // namespace

SweepPlan SweepPlan::Make(const std::string& command, const std::vector<std::string>& entries,
                          const std::vector<std::string>& topologies,
                          const std::vector<std::string>& param_texts, const po::variables_map& vm,
                          const ParamFlags& params, const CommonOptions& common) {
  const std::vector<const kernels::KernelInfo*> infos = EntriesNamed(command, entries);
  if (infos.empty()) {
    throw UsageError(command,
                     "name the entry to sweep, e.g. tpusim sweep all_gather_ring "
                     "--topology v5e-4x4 --param bytes=4K:1M:x4.");
  }
  const kernels::ParamValues given = params.Given(command, vm, infos);
  SweepPlan plan;
  for (const auto& [name, value] : given)
    plan.fixed_flags_.push_back(FlagOf(name) + "=" + value.ToString());
  const std::vector<std::string> run_flags = common.RunFlags(vm);
  ParseRunFlags(command, run_flags);  // each checked as `run` checks it
  plan.fixed_flags_.insert(plan.fixed_flags_.end(), run_flags.begin(), run_flags.end());

  const std::vector<RunOptionName> run_options = RunOptionNames();
  std::set<std::string> names;
  bool topology_swept = false;
  for (const std::string& text : param_texts) {
    Dimension dim{ParseSweepAxis(command, "--param", text)};
    const std::string& name = dim.axis.name;
    if (!names.insert(name).second)
      throw UsageError(command, "--param " + name + " is given twice; give all its values once.");
    const auto option = std::find_if(run_options.begin(), run_options.end(),
                                     [&name](const RunOptionName& o) { return o.name == name; });
    const bool everyone = std::all_of(infos.begin(), infos.end(), [&name](const auto* info) {
      return info->FindParam(name) != nullptr;
    });
    if (name == "topology") {
      topology_swept = true;
    } else if (everyone) {
      dim.flag = FlagOf(name);
      if (given.count(name)) {
        throw UsageError(command, "--param " + name + " sweeps the parameter " + dim.flag +
                                      " also sets; drop one of the two.");
      }
    } else if (option != run_options.end()) {
      dim.flag = option->flag;
      dim.presence = !option->takes_value;
      if (vm.count(option->flag.substr(2)) && !vm[option->flag.substr(2)].defaulted()) {
        throw UsageError(command, "--param " + name + " sweeps the run option " + dim.flag +
                                      " also sets; drop one of the two.");
      }
    } else {
      Unknown(command, name, infos);
    }
    plan.dimensions_.push_back(std::move(dim));
  }
  if (topology_swept && !topologies.empty()) {
    throw UsageError(command,
                     "--param topology and --topology both give the topologies; "
                     "give them once.");
  }
  if (!topology_swept) {
    if (topologies.empty())
      throw UsageError(command, "--topology is required, e.g. --topology v5e-4x4,v5e-8x8.");
    plan.dimensions_.push_back(Dimension{SweepAxis{"topology", topologies, false}});
  }
  std::vector<std::string> names_of_entries;
  for (const auto* info : infos)
    names_of_entries.push_back(info->name);
  plan.dimensions_.push_back(Dimension{SweepAxis{"entry", names_of_entries, false}});

  for (size_t d = 0; d < plan.dimensions_.size(); ++d) {
    Dimension& dim = plan.dimensions_[d];
    if (dim.axis.name == "topology") {
      for (const std::string& topology : dim.axis.values)
        topologies::LoadTopology(topology);  // a TopologyError names it and the presets
    } else if (dim.axis.name != "entry" && infos.front()->FindParam(dim.axis.name)) {
      dim.axis.values = CheckEntryValues(command, plan.dimensions_, d, infos, given);
    } else if (dim.axis.name != "entry") {
      CheckRunOptionValues(command, dim);
    }
  }
  size_t points = 1;
  for (const Dimension& dim : plan.dimensions_) {
    points *= dim.axis.values.size();
    if (points > kMaxPoints) {
      throw UsageError(command, "the sweep has more than " + std::to_string(kMaxPoints) +
                                    " points; sweep fewer values, or split it by hand.");
    }
  }
  return plan;
}

std::vector<size_t> SweepPlan::Swept() const {
  std::vector<size_t> swept;
  for (size_t d = 0; d < dimensions_.size(); ++d) {
    if (dimensions_[d].axis.values.size() > 1) swept.push_back(d);
  }
  return swept;
}

size_t SweepPlan::points() const {
  size_t points = 1;
  for (const Dimension& dim : dimensions_)
    points *= dim.axis.values.size();
  return points;
}

std::vector<std::string> SweepPlan::ValuesAt(size_t index) const {
  std::vector<std::string> values;
  for (const Dimension& dim : dimensions_) {
    const size_t size = dim.axis.values.size();
    values.push_back(dim.axis.values[index % size]);
    index /= size;
  }
  return values;
}

std::vector<std::string> SweepPlan::Command(size_t index) const {
  const std::vector<std::string> values = ValuesAt(index);
  std::vector<std::string> args = {"run"};
  std::vector<std::string> flags;
  for (size_t d = 0; d < dimensions_.size(); ++d) {
    const Dimension& dim = dimensions_[d];
    if (dim.axis.name == "entry") {
      args.push_back(values[d]);
    } else if (dim.axis.name == "topology") {
      flags.push_back("--topology=" + values[d]);
    } else if (!dim.presence) {
      // --flag=value: a value that starts with '-' is not read as an option.
      flags.push_back(dim.flag + "=" + values[d]);
    } else if (values[d] == "true") {
      flags.push_back(dim.flag);
    }
  }
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), fixed_flags_.begin(), fixed_flags_.end());
  args.push_back("--json");
  return args;
}

nlohmann::ordered_json SweepPlan::ToJson() const {
  nlohmann::ordered_json json;
  nlohmann::ordered_json dims = nlohmann::ordered_json::array();
  for (const Dimension& dim : dimensions_) {
    dims.push_back({{"name", dim.axis.name},
                    {"values", dim.axis.values},
                    {"flag", dim.flag},
                    {"presence", dim.presence}});
  }
  json["dimensions"] = dims;
  json["fixed"] = fixed_flags_;
  return json;
}

SweepPlan SweepPlan::FromJson(const nlohmann::ordered_json& json) {
  SweepPlan plan;
  try {
    for (const auto& dim : json.at("dimensions")) {
      Dimension d{SweepAxis{dim.at("name").get<std::string>(),
                            dim.at("values").get<std::vector<std::string>>(), false},
                  dim.at("flag").get<std::string>(), dim.at("presence").get<bool>()};
      if (d.axis.values.empty()) throw std::runtime_error("a dimension has no values");
      plan.dimensions_.push_back(std::move(d));
    }
    plan.fixed_flags_ = json.at("fixed").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("its \"sweep\" is not a sweep's: ") + e.what());
  }
  if (plan.dimensions_.empty()) throw std::runtime_error("its \"sweep\" has no dimensions");
  return plan;
}

}  // namespace tpusim::cli
