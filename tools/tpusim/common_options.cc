#include "tools/tpusim/common_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "base/text.h"
#include "kernels/lax/algorithm.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/huge_pages.h"
#include "tools/tpusim/slow_options.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace po = boost::program_options;

namespace {

// The checks of Pallas interpret mode that `run` and `compare` take as flags
// (docs/references.md §5): --no-race-check, --uninitialized-memory nan|zero,
// --out-of-bounds-reads raise|uninitialized, --grid-seed N.
void AddCheckOptions(po::options_description& options) {
  options.add_options()("no-race-check",
                        "skip the happens-before race check of functional runs (it is on by "
                        "default, as interpret mode's detect_races); two DMAs writing the same "
                        "bytes at the same time are still caught, in every run")(
      "uninitialized-memory", po::value<std::string>()->default_value("nan"),
      "what memory no one wrote reads as: nan (integers: the dtype's max) or zero")(
      "out-of-bounds-reads", po::value<std::string>()->default_value("raise"),
      "a load or compute read of a slice past its ref's shape: raise, or uninitialized (the "
      "part outside reads as --uninitialized-memory does; stores out of bounds always raise)")(
      "grid-seed", po::value<std::string>(),
      "run the grid points of 'parallel' dimensions in an order drawn from this seed "
      "(default: lexicographic)");
}

void ParseChecks(const std::string& command, const po::variables_map& vm, base::RunConfig& config) {
  config.race_check = !vm.count("no-race-check");
  const std::string memory = vm["uninitialized-memory"].as<std::string>();
  if (memory == "zero") {
    config.uninitialized_memory = base::UninitializedMemory::kZero;
  } else if (memory != "nan") {
    throw UsageError(command, "--uninitialized-memory is '" + memory + "'; use nan or zero.");
  }
  const std::string reads = vm["out-of-bounds-reads"].as<std::string>();
  if (reads == "uninitialized") {
    config.out_of_bounds_reads = base::OutOfBoundsReads::kUninitialized;
  } else if (reads != "raise") {
    throw UsageError(command,
                     "--out-of-bounds-reads is '" + reads + "'; use raise or uninitialized.");
  }
  if (vm.count("grid-seed")) {
    const std::string text = vm["grid-seed"].as<std::string>();
    size_t used = 0;
    uint64_t seed = 0;
    try {
      if (!text.empty() && text[0] != '-') seed = std::stoull(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) {
      throw UsageError(command, "--grid-seed is '" + text +
                                    "'; give a whole number from 0 to 18446744073709551615.");
    }
    config.grid_seed = seed;
  }
}

constexpr unsigned kRunOptionGroups = kRunOptions | kCheckOptions;

// Boost's wording names the problem but not the fix: each error a user meets becomes a
// sentence that says what to write instead.
UsageError Explained(const std::string& command, const po::error& e) {
  const auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
  const std::string option = named ? named->get_option_name() : "";
  if (dynamic_cast<const po::multiple_occurrences*>(&e))
    return UsageError(command, option + " is given more than once; give it once.");
  if (dynamic_cast<const po::invalid_option_value*>(&e)) {
    // Boost keeps the value only inside its message: "the argument ('abc') for option ...".
    const std::string what = e.what();
    const size_t open = what.find("('"), close = what.find("')");
    const std::string value =
        open != std::string::npos && close > open ? what.substr(open + 2, close - open - 2) : "";
    std::string message = option;
    message += " takes a number, and '";
    message += value;
    message += "' is not one; write e.g. ";
    message += option;
    message += " 2.";
    return UsageError(command, message);
  }
  if (const auto* syntax = dynamic_cast<const po::invalid_command_line_syntax*>(&e);
      syntax && syntax->kind() == po::invalid_command_line_syntax::missing_parameter) {
    return UsageError(command, option + " needs a value after it.");
  }
  return UsageError(command, e.what());
}

}  // namespace

void CommonOptions::Add(po::options_description& options, unsigned groups) {
  groups_ = groups;
  auto add = options.add_options();
  if (groups & kTopologyOption) {
    add("topology,t", po::value(&topology_),
        "preset name (see `tpusim topologies`) or .textproto path");
  }
  if (groups & (kTopologyOption | kSliceOptions)) {
    add("slices", po::value(&slices_),
        "run N copies of the topology's slice joined by the data-center network (its dcn "
        "block; the v5e and v5p presets have one): the mesh gains an axis 'slice' of N in front");
  }
  if (groups & kRunOptions) {
    add("timing-only", "move no payload: same timing, no data check, memory independent of size");
    add("time-limit", po::value(&time_limit_s_)->default_value(time_limit_s_),
        "stop a run after this many seconds of simulated time");
    add("wall-limit", po::value(&wall_limit_s_)->default_value(wall_limit_s_),
        "stop a run after this many seconds of host time (0: no limit), for loops whose steps "
        "cost no simulated time");
    add("collective-algorithm", po::value(&collective_algorithm_)->default_value("auto"),
        ("run every lax collective of a program that implements it with this algorithm: " +
         kernels::lax::AlgorithmNameList() +
         ", or auto (each picks the fastest by its cost estimate)")
            .c_str());
  }
  if (groups & (kRunOptions | kSliceOptions)) {
    add("slow-chip", po::value(&slow_chip_),
        "make chips slower: CHIP=FACTOR[,CHIP=FACTOR...] multiplies chip CHIP's compute time "
        "and DMA issue latency by FACTOR and divides its HBM, VMEM and SMEM bandwidth by it; "
        "CHIP is an index or coordinates (3=2: chip 3 twice as slow; 1,2=2: chip (1, 2))");
    add("slow-link", po::value(&slow_link_),
        "make links slower: CHIP:DIRECTION=FACTOR[,...] divides the bandwidth of the DIRECTION "
        "link (x+, y-, ...) leaving CHIP by FACTOR, its latency kept (0,1:x+=4)");
  }
  if (groups & kCheckOptions) AddCheckOptions(options);
  if (groups & kLoadOption) {
    options.add_options()("load", po::value<std::vector<std::string>>(),
                          "load a shared library of kernels or programs built against tpusim "
                          "(anywhere on the line, repeatable)");
  }
}

KernelRunRequest CommonOptions::Request(const std::string& command, const po::variables_map& vm,
                                        const config::Topology* slice) const {
  if ((groups_ & kTopologyOption) && topology_.empty())
    throw UsageError(command, "--topology is required, e.g. --topology v5e-4x4.");
  KernelRunRequest request;
  if (groups_ & kTopologyOption) request.topology = Slice(topology_, vm);
  request.config.functional = !vm.count("timing-only");
  if (groups_ & kRunOptions) {
    request.config.time_limit = ParseTimeLimit(command, time_limit_s_);
    if (!(wall_limit_s_ >= 0) || !(wall_limit_s_ <= kMaxTimeLimitSeconds)) {  // NaN, inf too
      std::string message = "--wall-limit ";
      message += base::NumberText(wall_limit_s_);
      message += " is out of range: give host seconds from 0 (no limit) to ";
      message += base::NumberText(kMaxTimeLimitSeconds);
      message += ".";
      throw UsageError(command, message);
    }
    request.config.wall_limit_s = wall_limit_s_;
    if (collective_algorithm_ != "auto" && !kernels::lax::AlgorithmNamed(collective_algorithm_)) {
      throw UsageError(command, "--collective-algorithm is '" + collective_algorithm_ +
                                    "'; use auto, " + kernels::lax::AlgorithmNameList() + ".");
    }
    request.config.collective_algorithm = collective_algorithm_;
    Slowdowns(command, (groups_ & kTopologyOption) ? &request.topology : slice, request.config);
  }
  if (groups_ & kCheckOptions) ParseChecks(command, vm, request.config);
  return request;
}

config::Topology CommonOptions::Slice(const std::string& name, const po::variables_map& vm) const {
  config::Topology topology = topologies::LoadTopology(name);
  if (vm.count("slices")) topology = topologies::WithSlices(topology, slices_, name);
  UseHugePagesFor(topologies::DeviceCount(topology));
  return topology;
}

void CommonOptions::Slowdowns(const std::string& command, const config::Topology* topology,
                              base::RunConfig& config) const {
  if (!slow_chip_.empty()) config.chip_slowdown = ParseSlowChips(command, slow_chip_, topology);
  if (!slow_link_.empty()) config.link_slowdown = ParseSlowLinks(command, slow_link_, topology);
}

std::vector<std::string> CommonOptions::RunFlags(const po::variables_map& vm) const {
  std::vector<std::string> flags;
  for (const RunOptionName& option : RunOptionNames()) {
    const std::string name = option.flag.substr(2);
    if (!vm.count(name) || vm[name].defaulted()) continue;
    if (!option.takes_value) {
      flags.push_back(option.flag);
      continue;
    }
    // --flag=value: a value that starts with '-' is not read as an option.
    const boost::any& value = vm[name].value();
    if (const auto* text = boost::any_cast<std::string>(&value)) {
      flags.push_back(option.flag + "=" + *text);
    } else {
      char number[32];  // 17 digits: the double reads back exactly
      std::snprintf(number, sizeof number, "%.17g", boost::any_cast<double>(value));
      flags.push_back(option.flag + "=" + number);
    }
  }
  return flags;
}

std::vector<RunOptionName> RunOptionNames() {
  po::options_description options;
  CommonOptions common;
  common.Add(options, kRunOptionGroups);
  std::vector<RunOptionName> names;
  for (const auto& option : options.options()) {
    RunOptionName name;
    name.flag = "--" + option->long_name();
    name.name = option->long_name();
    std::replace(name.name.begin(), name.name.end(), '-', '_');
    name.takes_value = option->semantic()->max_tokens() > 0;
    names.push_back(std::move(name));
  }
  return names;
}

base::RunConfig ParseRunFlags(const std::string& command, const std::vector<std::string>& flags,
                              const config::Topology* topology) {
  po::options_description options;
  CommonOptions common;
  common.Add(options, kRunOptionGroups);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(flags).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw Explained(command, e);
  }
  return common.Request(command, vm, topology).config;
}

std::vector<const kernels::KernelInfo*> EntriesNamed(const std::string& command,
                                                     const std::vector<std::string>& names) {
  std::vector<const kernels::KernelInfo*> infos;
  for (const auto& name : kernels::Registry::Get().ExpandFamilies(names))
    infos.push_back(&FindEntry(command, name));
  return infos;
}

namespace {

// "'def' is one argument too many": the operands past the first `max`, named.
UsageError TooManyOperands(const std::string& command, const std::vector<std::string>& operands,
                           int max) {
  std::string message = "'";
  message += operands[static_cast<size_t>(max)];
  message += "' is an argument too many (";
  message += command;
  message += max == 0 ? " takes none" : " takes one";
  message +=
      " besides its options); remove it, or put it right after the option it is the "
      "value of.";
  return UsageError(command, message);
}

// `params`: the entries' parameter flags; nullptr for a command whose positional
// arguments are not entries.
bool Parse(const std::string& command, int argc, char** argv, po::options_description& options,
           int max_positional, std::vector<std::string>& positionals, po::variables_map& vm,
           const ParamFlags* params) {
  options.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("entry", po::value(&positionals));
  if (params) params->AddTo(hidden, options);
  po::options_description all;
  all.add(options).add(hidden);
  // Every positional argument is collected, so one too many can be named.
  po::positional_options_description positional;
  positional.add("entry", -1);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw Explained(command, e);
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    if (params) std::cout << params->Help(command, EntriesNamed(command, positionals));
    return false;
  }
  if (max_positional >= 0 && positionals.size() > static_cast<size_t>(max_positional))
    throw TooManyOperands(command, positionals, max_positional);
  // `--trace ""` would otherwise mean "no trace" and pass silently.
  for (const auto& [name, value] : vm) {
    const auto* text = boost::any_cast<std::string>(&value.value());
    const po::option_description* option = all.find_nothrow(name, false);
    const bool takes_value = option && option->semantic()->max_tokens() > 0;
    if (takes_value && text && text->empty() && !value.defaulted()) {
      std::string message = "--";
      message += name;
      message += " is given an empty value; give a value, or leave the option out.";
      throw UsageError(command, message);
    }
  }
  return true;
}

}  // namespace

bool ParseCommandLine(const std::string& command, int argc, char** argv,
                      po::options_description& options, int max_entries,
                      std::vector<std::string>& entries, po::variables_map& vm,
                      const ParamFlags& params) {
  return Parse(command, argc, argv, options, max_entries, entries, vm, &params);
}

bool ParseCommandLine(const std::string& command, int argc, char** argv,
                      po::options_description& options, int max_operands,
                      std::vector<std::string>& operands, po::variables_map& vm) {
  return Parse(command, argc, argv, options, max_operands, operands, vm, nullptr);
}

std::string OperandOrOption(const std::string& command, const std::vector<std::string>& operands,
                            const po::variables_map& vm, const std::string& option) {
  const std::string given = vm.count(option) ? vm[option].as<std::string>() : "";
  if (operands.empty()) return given;
  if (vm.count(option)) {
    std::string message = "the ";
    message += option;
    for (const std::string& part :
         {std::string(" is given twice, as '"), operands[0], std::string("' and as --"), option,
          std::string(" '"), given, std::string("'; give it once.")})
      message += part;
    throw UsageError(command, message);
  }
  return operands[0];
}

}  // namespace tpusim::cli
