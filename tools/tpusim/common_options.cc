#include "tools/tpusim/common_options.h"

#include <iostream>

#include "dsl/cost.h"
#include "dsl/dtype.h"
#include "tools/tpusim/cli.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace po = boost::program_options;

void CommonOptions::Add(po::options_description& options, unsigned groups) {
  groups_ = groups;
  auto add = options.add_options();
  if (groups & kTopologyOption) {
    add("topology,t", po::value(&topology_),
        "preset name (see `tpusim topologies`) or .textproto path");
  }
  if (groups & kAxisOptions) {
    add("axis,a", po::value(&axis_)->default_value(axis_), "mesh axis the collective runs over");
    add("axis2", po::value(&axis2_),
        "second mesh axis of two-axis kernels (all_gather_2d, agw_matmul_*); default: the "
        "first other axis");
  }
  if (groups & kBytesOption) {
    add("bytes,b", po::value(&bytes_),
        "collectives: V, the full (gathered) array size: 4096, 64K, 16M, 1G");
  }
  if (groups & kProblemOptions) {
    add("m", po::value(&m_), "matmuls: rows of A and of the output; programs: the batch size");
    add("k", po::value(&k_), "matmuls and programs: the contracting dim");
    add("n", po::value(&n_), "matmuls and programs: columns of B and of the output");
  }
  if (groups & kBlockOptions) {
    add("bm", po::value(&bm_), "matmul block rows (default: up to 512)");
    add("bk", po::value(&bk_), "matmul block contracting dim (default: up to 1024)");
    add("bn", po::value(&bn_), "matmul block columns (default: up to 1024)");
  }
  if (groups & kNumericOptions) {
    add("dtype", po::value(&dtype_)->default_value(dtype_),
        "element type: bf16 or f32 (matmuls also int8, int32)");
    add("precision", po::value(&precision_)->default_value(precision_),
        "dots on f32: DEFAULT (one bf16 pass), HIGH (three) or HIGHEST (six)");
  }
  if (groups & kRunOptions) {
    add("timing-only", "move no payload: same timing, no data check, memory independent of size");
    add("time-limit", po::value(&time_limit_s_)->default_value(time_limit_s_),
        "stop a run after this many seconds of simulated time");
  }
  if (groups & kCheckOptions) InterpretChecks::AddOptions(options);
  if (groups & kLoadOption) {
    options.add_options()("load", po::value<std::vector<std::string>>(),
                          "load a shared library of kernels or programs built against tpusim "
                          "(anywhere on the line, repeatable)");
  }
}

KernelRunRequest CommonOptions::Request(const std::string& command,
                                        const po::variables_map& vm) const {
  if ((groups_ & kTopologyOption) && topology_.empty())
    throw UsageError(command, "--topology is required, e.g. --topology v5e-4x4.");
  for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"--m", m_},
                                    {"--k", k_},
                                    {"--n", n_},
                                    {"--bm", bm_},
                                    {"--bk", bk_},
                                    {"--bn", bn_}}) {
    if (value < 0) throw UsageError(command, std::string(flag) + " must be positive.");
  }
  KernelRunRequest request;
  if (groups_ & kTopologyOption) request.topology = topologies::LoadTopology(topology_);
  request.args.axis = axis_;
  request.args.axis2 = axis2_;
  if (!bytes_.empty()) request.args.bytes = ParseBytes(command, "--bytes", bytes_);
  request.args.m = m_;
  request.args.k = k_;
  request.args.n = n_;
  request.args.bm = bm_;
  request.args.bk = bk_;
  request.args.bn = bn_;
  request.args.dtype = dsl::ParseDType(dtype_);
  request.args.precision = dsl::ParsePrecision(precision_);
  request.args.functional = !vm.count("timing-only");
  if (groups_ & kRunOptions) request.time_limit = ParseTimeLimit(command, time_limit_s_);
  if (groups_ & kCheckOptions) request.checks = InterpretChecks::Parse(command, vm);
  return request;
}

bool ParseCommandLine(const std::string& command, int argc, char** argv,
                      po::options_description& options, int max_entries,
                      std::vector<std::string>& entries, po::variables_map& vm) {
  options.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("entry", po::value(&entries));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("entry", max_entries);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(command, e.what());
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return false;
  }
  return true;
}

}  // namespace tpusim::cli
