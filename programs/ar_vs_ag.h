#pragma once

// ar_vs_ag: y = x @ W with W sharded on the contracting dim over one mesh axis (8-way on
// v5e-8x16's 'x'). x is replicated: x bf16[B, D] P(), W bf16[D, F] P(axis, None), y
// bf16[B, F] P(). Two schedules (docs/references.md §4):
//   ar_vs_ag/allreduce: keep W sharded: slice x's K-chunk, dot the local shards, psum the
//                       [B, F] partials. Moves ~2 B F bytes per device; FLOPs 2 B D F / X.
//   ar_vs_ag/allgather: all_gather W, then dot the whole x. Moves ~D F bytes per device,
//                       whatever B is; FLOPs 2 B D F.
// Parameters: m is the batch B (required); k = D (default kArVsAgD) and n = F (default
// kArVsAgF); axis the axis.
//
// Why a crossover: the all-reduce's bytes grow with B and the all-gather's do not, while
// the all-gather schedule does X times the FLOPs. With the collectives at bandwidth W and
// the dots at C FLOP/s, T_ar = 2 B D F/(X C) + 2 (2 B F)(X-1)/(X W) and
// T_ag = 2 B D F/C + (2 D F)(X-1)/(X W) (bf16, 2 bytes); they meet at
// B* = D / (2 - D W / C): the all-reduce wins below B*, the all-gather above, and only
// when D < 2 C / W (about 8.8k on v5e's 4.5e10 B/s links); B* barely depends on W then.

#include <cstdint>

namespace tpusim::programs {

inline constexpr int64_t kArVsAgD = 2048;
inline constexpr int64_t kArVsAgF = 2048;

}  // namespace tpusim::programs
