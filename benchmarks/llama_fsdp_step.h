#pragma once

// The HLO text of one training step of a Llama-class transformer under FSDP on 8 devices,
// as XLA prints a compiled SPMD module: per layer, the four weight matrices all-gathered
// before use, RMS-norm, attention (batched dots, softmax) and SwiGLU MLP fusions forward;
// the matching dots backward, each weight gradient reduce-scattered, and an optimizer update
// fusion per weight shard. A 40-layer step (Llama-2 13B's depth) is about 2,000
// instructions: what the HLO speed targets are measured on (benchmarks/hlo_benchmarks.cc),
// and, small, what a functional test checks against the host evaluation.

#include <cstdint>
#include <string>

namespace tpusim::bench {

struct LlamaConfig {
  int layers = 40;
  int64_t batch = 1;     // sequences per device
  int64_t seq = 1024;    // tokens per sequence
  int64_t model = 5120;  // d: divisible by 8 and by heads
  int64_t heads = 40;
  int64_t ffn = 13824;  // f: divisible by 8
};

// The module for `config` on 8 devices (num_partitions=8, one FSDP group of all of them).
std::string LlamaFsdpStep(const LlamaConfig& config);

}  // namespace tpusim::bench
