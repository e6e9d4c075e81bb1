// The Llama-class FSDP step the HLO speed benchmark runs (benchmarks/llama_fsdp_step.h): at
// full size it is the ~2,000-instruction module the targets speak of, and at a small size
// every device's results match the host evaluation, so the benchmark times a module tpusim
// runs correctly.

#include <gtest/gtest.h>

#include <memory>

#include "benchmarks/llama_fsdp_step.h"
#include "hlo/parser.h"
#include "hlo/run/entry.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

TEST(LlamaStep, FullSizeIsAboutTwoThousandInstructions) {
  const hlo::Module module = hlo::ParseModule(bench::LlamaFsdpStep({}), "step.hlo");
  size_t instructions = 0;
  for (const hlo::Computation& c : module.computations)
    instructions += c.instructions.size();
  EXPECT_GE(instructions, 2000u);
  EXPECT_EQ(module.num_partitions, 8);
}

TEST(LlamaStep, SmallSizeMatchesTheHostEvaluationOnEveryDevice) {
  bench::LlamaConfig small;
  small.layers = 2;
  small.seq = 16;
  small.model = 64;
  small.heads = 4;
  small.ffn = 128;
  auto module = std::make_shared<const hlo::Module>(
      hlo::ParseModule(bench::LlamaFsdpStep(small), "small_step.hlo"));
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x4"));
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(module, "small_step.hlo");
  const kernels::Workload w = info.make(mesh, info.Bind({}));
  ASSERT_TRUE(w.timing_only_reason.empty()) << w.timing_only_reason;
  const dsl::RunResult r = w.program.Run(w.inputs, dsl::RunOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  const dsl::Comparison check =
      dsl::CheckAgainstReference(w.program, r, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;
  // Every weight gathered twice (forward, backward) and its gradient scattered once.
  int gathers = 0, scatters = 0;
  for (const dsl::OpTime& op : r.op_times) {
    if (op.op == "all-gather") gathers += static_cast<int>(op.count);
    if (op.op == "reduce-scatter") scatters += static_cast<int>(op.count);
  }
  EXPECT_EQ(gathers, 2 * 4 * small.layers);
  EXPECT_EQ(scatters, 4 * small.layers);
}

}  // namespace
}  // namespace tpusim
