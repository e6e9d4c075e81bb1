// The HLO targets on a Llama-class training step (benchmarks/llama_fsdp_step.h: 40 layers,
// FSDP on 8 devices, about 2,000 instructions): it parses in well under 1 s and runs
// timing-only on v5e-2x4 in under 10 s on a 2-core machine (docs/hlo.md, "Speed").

#include <benchmark/benchmark.h>

#include <memory>

#include "benchmarks/llama_fsdp_step.h"
#include "hlo/parser.h"
#include "hlo/run/entry.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

size_t Instructions(const hlo::Module& module) {
  size_t n = 0;
  for (const hlo::Computation& c : module.computations)
    n += c.instructions.size();
  return n;
}

void BM_LlamaStepParse(benchmark::State& state) {
  const std::string text = bench::LlamaFsdpStep({});
  size_t instructions = 0;
  for (auto _ : state) {
    const hlo::Module module = hlo::ParseModule(text, "llama_fsdp_step.hlo");
    instructions = Instructions(module);
  }
  state.counters["instructions"] = static_cast<double>(instructions);
}
BENCHMARK(BM_LlamaStepParse)->Unit(benchmark::kMillisecond);

void BM_LlamaStepRunTimingOnly(benchmark::State& state) {
  auto module = std::make_shared<const hlo::Module>(
      hlo::ParseModule(bench::LlamaFsdpStep({}), "llama_fsdp_step.hlo"));
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x4"));
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(module, "llama_fsdp_step.hlo");
  kernels::Params params = info.Bind({});
  params.functional = false;
  double simulated = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    const kernels::Workload w = info.make(mesh, params);
    dsl::RunOptions options;
    options.functional = false;
    const dsl::RunResult r = w.program.Run(w.inputs, options);
    if (!r.ok) state.SkipWithError(r.error.c_str());
    simulated = static_cast<double>(r.time()) * 1e-12;
    events = r.stats.events;
  }
  state.counters["instructions"] = static_cast<double>(Instructions(*module));
  state.counters["simulated_s"] = simulated;
  state.counters["model_events"] = static_cast<double>(events);
}
BENCHMARK(BM_LlamaStepRunTimingOnly)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace tpusim
