// tpusim bench matmul: one problem size over several block sizes, so a user picks blocks
// from the numbers. Small blocks pay the per-grid-step cost (the compute model's) many times; the
// table shows it beside the time, as the Pallas TPU matmul guide's table does.

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dsl/dtype.h"
#include "sim/compute_models.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"

namespace tpusim::cli {

namespace {

struct Blocks {
  int64_t bm = 0, bk = 0, bn = 0;
};

// "128x128x128,512x1024x1024": (bm, bk, bn) triples, as the guide lists them.
std::vector<Blocks> ParseBlocks(const std::string& text) {
  std::vector<Blocks> blocks;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    Blocks b;
    char x1 = 0, x2 = 0;
    std::stringstream in(item);
    if (!(in >> b.bm >> x1 >> b.bk >> x2 >> b.bn) || x1 != 'x' || x2 != 'x' || !in.eof() ||
        b.bm <= 0 || b.bk <= 0 || b.bn <= 0) {
      throw UsageError("bench", "--blocks item '" + item +
                                    "' is not BMxBKxBN with positive sizes; write e.g. "
                                    "--blocks 128x128x128,512x1024x1024.");
    }
    blocks.push_back(b);
  }
  if (blocks.empty()) throw UsageError("bench", "--blocks names no block sizes.");
  return blocks;
}

}  // namespace

int RunBenchMatmul(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string blocks_text;
  po::options_description options(
      "tpusim bench matmul --topology T --m M --k K --n N [--blocks LIST] [options]\n\n"
      "Runs the tiled matmul [M, K] @ [K, N] once per block size (bm, bk, bn) and prints,\n"
      "per row: grid steps, simulated time, TFLOP/s, % of the MXU peak, the share of the\n"
      "time spent in per-grid-step cost, and how many times slower than the fastest row.\n"
      "Blocks that do not tile the problem are errors.\n\noptions");
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  options.add_options()(
      "blocks",
      po::value(&blocks_text)->default_value("128x128x128,256x256x256,512x512x512,512x1024x1024"),
      "comma-separated BMxBKxBN block sizes")(
      "json", "end the output with the rows as one JSON array on the last line");
  std::vector<std::string> entries;
  po::variables_map vm;
  // --blocks sets the block sizes: the other parameters of matmul are flags.
  const ParamFlags params({"bm", "bk", "bn"});
  if (!ParseCommandLine("bench", argc, argv, options, 1, entries, vm, params)) return 0;
  const kernels::KernelInfo& matmul = FindEntry("bench", "matmul");
  KernelRunRequest base = common.Request("bench", vm);
  base.kernel = "matmul";
  base.params = params.Given("bench", vm, {&matmul});
  const kernels::Params problem = matmul.Bind(base.params);
  const int64_t m = problem.Int("m"), k = problem.Int("k"), n = problem.Int("n");
  const auto& chip = base.topology.chip();
  const double step_seconds = static_cast<double>(sim::ComputeModels::Build(chip, "the chip")
                                                      ->Plan(base::GridStep{}, "a grid step")
                                                      .cycles) /
                              chip.clock_hz();

  const std::vector<Blocks> block_list = ParseBlocks(blocks_text);
  if (ParseOnly()) return 0;
  std::vector<KernelRunReport> reports;
  for (const Blocks& b : block_list) {
    KernelRunRequest request = base;
    request.params.insert_or_assign("bm", kernels::ParamValue(b.bm));
    request.params.insert_or_assign("bk", kernels::ParamValue(b.bk));
    request.params.insert_or_assign("bn", kernels::ParamValue(b.bn));
    reports.push_back(RunKernel(request));
  }
  double best = 0;
  for (const auto& r : reports) {
    if (r.completed && (best == 0 || r.sim_seconds() < best)) best = r.sim_seconds();
  }
  std::printf("# tpusim bench matmul on %s: %s [%ld, %ld] @ [%ld, %ld], precision %s\n",
              base.topology.name().c_str(), problem.String("dtype").c_str(), static_cast<long>(m),
              static_cast<long>(k), static_cast<long>(k), static_cast<long>(n),
              problem.String("precision").c_str());
  std::printf("# %-16s %8s %12s %9s %7s %10s %9s %s\n", "blocks", "steps", "time (us)", "TFLOP/s",
              "%peak", "%step cost", "x fastest", "data");
  bool all_ok = true;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : reports) {
    all_ok = all_ok && r.ok();
    const std::string blocks = std::to_string(r.blocks.at(0)) + "x" +
                               std::to_string(r.blocks.at(1)) + "x" +
                               std::to_string(r.blocks.at(2));
    if (!r.completed) {
      std::printf("  %-16s failed: %s\n", blocks.c_str(), r.error.c_str());
      continue;
    }
    const double steps = static_cast<double>(m / r.blocks[0]) *
                         static_cast<double>(n / r.blocks[2]) *
                         static_cast<double>(k / r.blocks[1]);
    const double step_share = 100 * steps * step_seconds / r.sim_seconds();
    const RunMetrics& m = r.metrics;
    std::printf("  %-16s %8.0f %12s %9s %7s %10.1f %9.2f %s\n", blocks.c_str(), steps,
                FixedValue(FieldOf(&RunMetrics::sim_seconds), m).c_str(),
                FixedValue(FieldOf(&RunMetrics::achieved_flops), m).c_str(),
                FixedValue(FieldOf(&RunMetrics::percent_of_peak), m).c_str(), step_share,
                r.sim_seconds() / best, HumanValue(FieldOf(&RunMetrics::correct), m).c_str());
    nlohmann::ordered_json j = r.ToJson();
    j["grid_steps"] = steps;
    j["step_cost_percent"] = step_share;
    rows.push_back(std::move(j));
  }
  if (vm.count("json")) std::cout << rows.dump() << std::endl;
  return all_ok ? 0 : 1;
}

}  // namespace tpusim::cli
