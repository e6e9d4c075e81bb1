#include "tools/tpusim/param_flags.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "base/text.h"
#include "tools/tpusim/cli.h"

namespace tpusim::cli {

namespace po = boost::program_options;

namespace {

// Every parameter name the registered entries declare, with whether all of its
// declarations are bools (then the flag alone means true).
std::map<std::string, bool> DeclaredNames(const std::set<std::string>& excluded) {
  std::map<std::string, bool> names;
  for (const auto& entry : kernels::Registry::Get().kernels()) {
    for (const auto& param : entry.params) {
      if (excluded.count(param.name())) continue;
      const bool is_bool = param.type() == kernels::ParamType::kBool;
      const auto [it, added] = names.emplace(param.name(), is_bool);
      if (!added) it->second = it->second && is_bool;
    }
  }
  return names;
}

std::string ValueName(const kernels::Param& param) {
  switch (param.type()) {
    case kernels::ParamType::kInt:
      return "N";
    case kernels::ParamType::kBytes:
      return "SIZE";
    case kernels::ParamType::kDouble:
      return "X";
    case kernels::ParamType::kBool:
      return "true|false";
    case kernels::ParamType::kString:
      return "TEXT";
    case kernels::ParamType::kInts:
      return "N,N,...";
    case kernels::ParamType::kIntLists:
    case kernels::ParamType::kIntPairs:
      return "{N,N},{N,N},...";
    case kernels::ParamType::kStrings:
      return "TEXT,TEXT,...";
    case kernels::ParamType::kDoubles:
      return "X,X,...";
    case kernels::ParamType::kEnum: {
      std::string values;
      for (const auto& value : param.values())
        base::AppendListItem(values, "|", value);
      return values;
    }
  }
  return "VALUE";
}

}  // namespace

std::string FlagOf(const std::string& param) {
  std::string flag = "--" + param;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string FlagsNote(const std::vector<std::string>& params) {
  std::vector<std::string> flags;
  for (const auto& param : params)
    flags.push_back(FlagOf(param));
  if (flags.empty()) return "";
  return (flags.size() > 1 ? " (flags " : " (flag ") + kernels::JoinList(flags) + ")";
}

void ParamFlags::AddTo(po::options_description& hidden,
                       const po::options_description& visible) const {
  for (const auto& [name, is_bool] : DeclaredNames(excluded_)) {
    const std::string option = FlagOf(name).substr(2);
    if (visible.find_nothrow(option, false)) {
      std::string entries;
      for (const auto& entry : kernels::Registry::Get().kernels()) {
        if (entry.FindParam(name)) base::AppendListItem(entries, ", ", entry.name);
      }
      throw Error(ErrorKind::kInvalidArgument,
                  "parameter '" + name + "' of " + entries + " would be the flag --" + option +
                      ", which this command already has; rename the parameter.");
    }
    auto* value = po::value<std::string>();
    if (is_bool) value->implicit_value("true");
    hidden.add_options()(option.c_str(), value);
  }
}

std::string ParamFlags::Help(const std::string& command,
                             const std::vector<const kernels::KernelInfo*>& entries) const {
  if (entries.empty()) {
    std::string text =
        "parameters: every kernel and program declares its own, with a type, default, unit\n"
        "and range; `tpusim " +
        command + " ENTRY --help` lists them. The registered entries' flags:\n";
    std::string line = " ";
    for (const auto& [name, is_bool] : DeclaredNames(excluded_)) {
      if (line.size() + FlagOf(name).size() + 1 > 88) {
        text += line + "\n";
        line = " ";
      }
      line += " " + FlagOf(name);
    }
    return text + line + "\n";
  }
  std::vector<std::string> names;
  for (const auto* entry : entries)
    names.push_back(entry->name);
  po::options_description help("parameters of " + kernels::JoinList(names) +
                               " [type, unit; default; allowed values]");
  std::set<std::string> shown;
  for (const auto* entry : entries) {
    for (const auto& param : entry->params) {
      if (excluded_.count(param.name()) || !shown.insert(param.name()).second) continue;
      std::vector<std::string> takers;
      for (const auto* other : entries) {
        if (other->FindParam(param.name())) takers.push_back(other->name);
      }
      const std::string only =
          takers.size() < entries.size() ? " (only " + kernels::JoinList(takers) + ")" : "";
      auto* value = po::value<std::string>()->value_name(ValueName(param));
      help.add_options()(FlagOf(param.name()).substr(2).c_str(), value,
                         (param.description() + only + " [" + param.Summary() + "]").c_str());
    }
  }
  std::ostringstream text;
  text << help;
  const std::string printed = text.str();
  return printed.empty() || printed.back() == '\n' ? printed : printed + "\n";
}

kernels::ParamValues ParamFlags::Given(
    const std::string& command, const po::variables_map& vm,
    const std::vector<const kernels::KernelInfo*>& entries) const {
  kernels::ParamValues given;
  std::vector<std::string> by_none;                         // flags no entry takes
  std::map<std::string, std::vector<std::string>> refused;  // entry -> flags only it lacks
  for (const auto& [name, is_bool] : DeclaredNames(excluded_)) {
    const std::string option = FlagOf(name).substr(2);
    if (!vm.count(option)) continue;
    given.emplace(name, vm[option].as<std::string>());
    std::vector<std::string> lacking;
    for (const auto* entry : entries) {
      if (!entry->FindParam(name)) lacking.push_back(entry->name);
    }
    if (entries.size() > 1 && lacking.size() == entries.size()) {
      by_none.push_back(FlagOf(name));
    } else {
      for (const auto& entry : lacking)
        refused[entry].push_back(FlagOf(name));
    }
  }
  if (by_none.empty() && refused.empty()) return given;
  std::string message;
  if (!by_none.empty()) {
    message = "none of the " + std::to_string(entries.size()) + " entries takes " +
              kernels::JoinList(by_none);
  }
  for (const auto* entry : entries) {
    const auto it = refused.find(entry->name);
    if (it == refused.end()) continue;
    base::AppendListItem(message, "; ", entry->name + " takes no " + kernels::JoinList(it->second));
  }
  if (entries.size() == 1) {
    std::vector<std::string> flags;
    for (const auto& param : entries[0]->params) {
      if (!excluded_.count(param.name())) flags.push_back(FlagOf(param.name()));
    }
    message += flags.empty() ? "; it takes no parameters."
                             : "; it takes " + kernels::JoinList(flags) + ".";
  } else {
    message += ". Leave a flag unset unless every entry takes it.";
  }
  throw UsageError(command, message + " (`tpusim " + command + " " +
                                (entries.size() == 1 ? entries[0]->name : "ENTRY...") +
                                " --help` describes them)");
}

}  // namespace tpusim::cli
