// Layer 3 for programs: a whole program's simulated time against docs/references.md §3/§4,
// with the tolerance beside each formula. Timing-only runs on one x-row of v5e-16x16
// (16 chips, wraparound), where §3's bidirectional formulas hold.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "base/work.h"
#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

// The chip's rates as the program layer achieves them (the chip.cost fields, sim/compute_models.h)
// and the axis's links (docs/references.md §1, §2; a step's latency as docs/time-model.md gives
// it).
struct Rates {
  config::ChipConfig chip;
  double mxu, hbm, w_ici, step, launch;
  double x = 16;
  explicit Rates(const Mesh& mesh) : chip(mesh.topology().chip()) {
    const auto& t = mesh.topology();
    mxu = kernels::PeakMxuFlops(mesh) * t.chip().cost().xla_mxu_efficiency();
    hbm = t.chip().hbm().bandwidth_bytes_per_s() * t.chip().cost().xla_hbm_efficiency();
    w_ici = 2 * t.ici().link_bandwidth_bytes_per_s();
    step = (t.ici().hop_latency_ns() + t.ici().signal_latency_ns()) * 1e-9;
    launch = t.chip().cost().op_launch_ns() * 1e-9;
    x = mesh.AxisSize("x");
  }
  // A bf16 dot as XLA's op: the compute model's time for it (its launch, the roofline of its
  // MXU and HBM parts, its pipeline fill).
  double Dot(double m, double k, double n) const {
    return testing::ModelSeconds(
        chip, testing::XlaDotWork(2 * m * k * n, base::MxuInput::kBF16, base::Precision::kDefault,
                                  2 * (m * k + k * n), 2 * m * n));
  }
  // §3: the bidirectional ring all-gather (and reduce-scatter) of V bytes with wraparound,
  // (V/W_ici)(X-1)/X, plus a step's latency per step and the launch.
  double Gather(double v) const { return v / w_ici * (x - 1) / x + (x - 1) * step + launch; }
  // §3: all-reduce = reduce-scatter + all-gather, each (V/W_ici)(X-1)/X; the
  // reduce-scatter streams chunks through every step, so its step latencies overlap with
  // the transfer and only the all-gather's add up.
  double AllReduce(double v) const { return v / w_ici * (x - 1) / x + Gather(v); }
};

Mesh SixteenChipRing() {
  return Mesh(testing::MakeTopology({16}, {true}));
}

double TimingOnlySeconds(const std::string& name, const Mesh& mesh,
                         const kernels::ParamValues& args) {
  kernels::Workload w =
      testing::Entry(name).make(mesh, testing::ParamsFor(name, args, /*functional=*/false));
  RunOptions options;
  options.functional = false;
  const RunResult r = w.program.Run(w.inputs, options);
  EXPECT_TRUE(r.ok) << r.error;
  return static_cast<double>(r.time()) * 1e-12;
}

// docs/references.md §4, blocking (nothing overlaps, so the terms add instead of max):
//   multiply the local shards, then all-reduce:  T = 2BDF/(X C) + 2 (2BF)(X-1)/(X W_ici)
//   all-gather W, then multiply:                 T = (2DF)(X-1)/(X W_ici) + 2BDF/C
// with C the achieved MXU rate (or the HBM roofline when the dot is memory-bound), the
// all-reduce = reduce-scatter + all-gather of §3, and a step's latency per gather step. The
// ar_vs_ag programs are these schedules (the first is seed003/b's: a dot of local shards, then
// psum). Tolerance: 95-115% of the formula: the psum's reduce-scatter also pays its chunk
// pipeline's fill and VPU adds (tests/fidelity/lax_fidelity_test.cc allows it 10%).
TEST(ProgramFidelity, BlockingShardedMatmulMatchesSection4) {
  const Mesh mesh = SixteenChipRing();
  const Rates r(mesh);
  const double b = 1024, d = 4096, f = 2048;
  const kernels::ParamValues args = {{"m", 1024}, {"k", 4096}, {"n", 2048}};
  const double slice = 2 * (b * d + b * d / r.x) / r.hbm;
  const double all_reduce = slice + r.Dot(b, d / r.x, f) + r.AllReduce(2 * b * f);
  const double all_gather = r.Gather(2 * d * f) + r.Dot(b, d, f);
  const double ar = TimingOnlySeconds("ar_vs_ag/allreduce", mesh, args);
  const double ag = TimingOnlySeconds("ar_vs_ag/allgather", mesh, args);
  std::printf("all-reduce plan %.1f us (formula %.1f), all-gather plan %.1f us (formula %.1f)\n",
              ar * 1e6, all_reduce * 1e6, ag * 1e6, all_gather * 1e6);
  EXPECT_GE(ar / all_reduce, 0.95);
  EXPECT_LE(ar / all_reduce, 1.15);
  EXPECT_GE(ag / all_gather, 0.95);
  EXPECT_LE(ag / all_gather, 1.15);
}

// An async all_gather (XLA's all-gather-start / -done) overlaps with the dot issued before
// its done. The dot is sized from the formulas to take 1.5x the gather (§3 for the
// gather, the MXU roofline for the dot), so the gather hides: the core waits in
// all_gather_done for under 10% of the run, and the run takes the dot's time within 10%.
// The control: a dot a fifth of the gather leaves most of it exposed.
struct Overlap {
  double exposed_fraction, seconds, dot_seconds;
};

Overlap RunOverlap(double dot_over_gather) {
  const Mesh mesh = SixteenChipRing();
  const Rates r(mesh);
  const int64_t rows = 1024, cols = 1024;  // bf16 shard: 2 MiB; V = 32 MiB
  const double gather = r.Gather(16.0 * rows * cols * 2);
  // A square bf16 dot n^3 at the MXU roofline: 2 n^3 / C = dot_over_gather x gather.
  const int64_t n = std::max<int64_t>(
      128, static_cast<int64_t>(std::cbrt(dot_over_gather * gather * r.mxu / 2)) / 128 * 128);
  auto program = shard_map(mesh, {P{"x", nullptr}, P{}}, {P{}, P{}},
                           [](ProgramContext& ctx, const std::vector<Value>& in) {
                             AsyncValues started = ctx.all_gather_start(in[0], "x", 0, true);
                             Value y = ctx.dot(in[1], in[1]);
                             return std::vector<Value>{ctx.all_gather_done(started), y};
                           });
  RunOptions options;
  options.functional = false;
  const RunResult result = program.Run({Array::Placeholder({16 * rows, cols}, DType::kBF16),
                                        Array::Placeholder({n, n}, DType::kBF16)},
                                       options);
  EXPECT_TRUE(result.ok) << result.error;
  const double seconds = static_cast<double>(result.time()) * 1e-12;
  const double waited =
      static_cast<double>(*std::max_element(result.async_wait.begin(), result.async_wait.end())) *
      1e-12;
  std::printf("dot %.1f us over gather %.1f us: run %.1f us, exposed %.1f us\n",
              r.Dot(n, n, n) * 1e6, gather * 1e6, seconds * 1e6, waited * 1e6);
  return {waited / seconds, seconds, r.Dot(static_cast<double>(n), n, n)};
}

TEST(ProgramFidelity, AsyncAllGatherHidesBehindALongEnoughDot) {
  const Overlap hidden = RunOverlap(1.5);
  EXPECT_LT(hidden.exposed_fraction, 0.1);
  EXPECT_GE(hidden.seconds / hidden.dot_seconds, 1.0);
  EXPECT_LE(hidden.seconds / hidden.dot_seconds, 1.1);
  EXPECT_GT(RunOverlap(0.2).exposed_fraction, 0.5);
}

}  // namespace
}  // namespace tpusim
