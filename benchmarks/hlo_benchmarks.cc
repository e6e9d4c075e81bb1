// How fast hlo/ reads a module the size a real training step compiles to: ~2,000
// instructions with typed operands, shardings, metadata, collectives and backend configs,
// generated in memory. The target is well under a second per module (docs/hlo.md).

#include <benchmark/benchmark.h>

#include <string>

#include "hlo/parser.h"

namespace tpusim {
namespace {

// Three instructions per layer (a dot, an add, an all-reduce), plus the parameters.
std::string GeneratedModule(int layers) {
  std::string text =
      "HloModule bench, is_scheduled=true, num_partitions=8\n\n"
      "%add (a: f32[], b: f32[]) -> f32[] {\n"
      "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
      "  ROOT %sum = f32[] add(f32[] %a, f32[] %b)\n}\n\n"
      "ENTRY %main (x: f32[128,256], w: f32[256,256]) -> f32[128,256] {\n"
      "  %x = f32[128,256]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}, "
      "metadata={op_name=\"x\"}\n"
      "  %w = f32[256,256]{1,0} parameter(1), sharding={replicated}, metadata={op_name=\"w\"}\n";
  std::string previous = "x";
  for (int layer = 0; layer < layers; ++layer) {
    const std::string n = std::to_string(layer);
    const std::string metadata = ", metadata={op_name=\"jit(step)/jit(main)/layer" + n +
                                 "/dot_general\" source_file=\"/work/model.py\" source_line=" + n +
                                 "}";
    text += "  %dot." + n + " = f32[128,256]{1,0} dot(f32[128,256]{1,0} %" + previous +
            ", f32[256,256]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}" +
            metadata + "\n";
    text += "  %residual." + n + " = f32[128,256]{1,0} add(f32[128,256]{1,0} %dot." + n +
            ", f32[128,256]{1,0} %" + previous + ")" + metadata + "\n";
    const std::string root = layer + 1 == layers ? "ROOT " : "";
    text += "  " + root + "%all-reduce." + n +
            " = f32[128,256]{1,0} all-reduce(f32[128,256]{1,0} %residual." + n +
            "), channel_id=" + std::to_string(layer + 1) +
            ", replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=%add, "
            "backend_config={\"operation_queue_id\":\"0\",\"collective_backend_config\":{\"is_"
            "sync\":true}}" +
            metadata + "\n";
    previous = "all-reduce." + n;
  }
  return text + "}\n";
}

void BM_ParseModule(benchmark::State& state) {
  const std::string text = GeneratedModule(static_cast<int>(state.range(0)));
  size_t instructions = 0;
  for (auto _ : state) {
    const hlo::Module module = hlo::ParseModule(text, "generated.hlo");
    instructions = module.entry_computation().instructions.size();
    benchmark::DoNotOptimize(module.computations.data());
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(instructions));
}
// 666 layers: 2,000 instructions in the entry computation.
BENCHMARK(BM_ParseModule)->ArgName("layers")->Arg(666)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpusim
