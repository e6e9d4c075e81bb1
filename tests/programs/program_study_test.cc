// The studies the example programs exist for, timing-only: where ar_vs_ag's crossover
// falls against the bytes-vs-FLOPs prediction, and what each mlp layout costs in time,
// ICI bytes and peak HBM per chip.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "base/work.h"
#include "kernels/registry.h"
#include "programs/ar_vs_ag.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

// One x-row of v5e-8x16: the 8-way axis of the studies (no wraparound).
dsl::Mesh EightChipRow() {
  return dsl::Mesh(testing::MakeTopology({8}, {false}));
}

// The formulas below charge each collective step one hop along the line, as bidi_ring runs
// on an axis without wraparound (kernels/lax/gather.h); the studies run it by name, since
// the planner's estimate for reduce-scatter rings on a line is off (docs/collectives.md).
dsl::RunResult RunTimingOnly(const std::string& name, const dsl::Mesh& mesh,
                             const kernels::ParamValues& given = {}) {
  kernels::Workload w =
      testing::Entry(name).make(mesh, testing::ParamsFor(name, given, /*functional=*/false));
  dsl::RunOptions options;
  options.functional = false;
  options.collective_algorithm = "bidi_ring";
  dsl::RunResult r = w.program.Run(w.inputs, options);
  EXPECT_TRUE(r.ok) << name << ": " << r.error;
  return r;
}

double Seconds(const dsl::RunResult& r) {
  return static_cast<double>(r.time()) * 1e-12;
}

// The predicted times of the two schedules, from the formulas the programs are built on:
// each array op at the roofline of the achieved MXU and HBM fractions (sim/compute_models.h,
// docs/references.md §1), and each collective on an axis without wraparound at
// docs/references.md §3's (V/W_oneway)(X-1)/X plus a step's latency (a hop and the remote
// semaphore's signal latency, docs/time-model.md) per step and the launch; psum is twice
// that (§3: all-reduce = 2 x reduce-scatter).
struct ArVsAgModel {
  config::ChipConfig chip;
  double mxu, hbm, oneway, step, launch;
  int x = 8;
  double d = programs::kArVsAgD, f = programs::kArVsAgF;

  explicit ArVsAgModel(const dsl::Mesh& mesh) : chip(mesh.topology().chip()) {
    const auto& t = mesh.topology();
    mxu = kernels::PeakMxuFlops(mesh) * t.chip().cost().xla_mxu_efficiency();
    hbm = t.chip().hbm().bandwidth_bytes_per_s() * t.chip().cost().xla_hbm_efficiency();
    oneway = t.ici().link_bandwidth_bytes_per_s();
    step = (t.ici().hop_latency_ns() + t.ici().signal_latency_ns()) * 1e-9;
    launch = t.chip().cost().op_launch_ns() * 1e-9;
    x = mesh.AxisSize("x");
  }
  // A bf16 dot as XLA's op: the compute model's time for it.
  double Dot(double b, double k, double n) const {
    return testing::ModelSeconds(
        chip, testing::XlaDotWork(2 * b * k * n, base::MxuInput::kBF16, base::Precision::kDefault,
                                  2 * (b * k + k * n), 2 * b * n));
  }
  double Ring(double bytes) const { return bytes / oneway * (x - 1) / x + (x - 1) * step + launch; }
  double AllReduce(double b) const {
    return 2 * (b * d + b * d / x) / hbm + Dot(b, d / x, f) + 2 * Ring(2 * b * f);
  }
  double AllGather(double b) const { return Ring(2 * d * f) + Dot(b, d, f); }
  // Where AllGather - AllReduce changes sign (it falls with b), by bisection.
  double Crossover() const {
    double lo = 1, hi = 1e6;
    for (int i = 0; i < 100; ++i) {
      const double mid = (lo + hi) / 2;
      (AllGather(mid) > AllReduce(mid) ? lo : hi) = mid;
    }
    return lo;
  }
};

// docs/references.md §4's argument: the all-reduce moves 2 B F bytes per device and the
// all-gather D F whatever B is, while the all-gather does X times the FLOPs; so the
// all-reduce wins for small batches and the all-gather above B* = D / (2 - D W / C) (see
// programs/ar_vs_ag.h). The simulated crossover (linear between the two sizes that bracket
// it) must lie within 20% of the one the formulas predict; both schedules' times within
// 15% of their formulas at the bracket. On v5e with D = F = 2048 it is about 1.5k rows.
TEST(ArVsAg, CrossoverFallsWhereBytesVsFlopsPredict) {
  const dsl::Mesh mesh = EightChipRow();
  const ArVsAgModel model(mesh);
  const double predicted = model.Crossover();
  // The pure bandwidth-vs-FLOPs form, without latencies or the HBM roofline.
  const double w = model.oneway;
  const double simple = model.d / (2 - model.d * w / model.mxu);
  std::printf("predicted crossover: B* = %.0f (D / (2 - D W / C) = %.0f)\n", predicted, simple);
  EXPECT_NEAR(predicted / simple, 1.0, 0.15);

  std::vector<double> sizes;
  for (int64_t b = 256; b <= 4096; b += 256)
    sizes.push_back(static_cast<double>(b));
  double previous_gap = 0, crossover = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const kernels::ParamValues args = {{"m", static_cast<int64_t>(sizes[i])}};
    const double ar = Seconds(RunTimingOnly("ar_vs_ag/allreduce", mesh, args));
    const double ag = Seconds(RunTimingOnly("ar_vs_ag/allgather", mesh, args));
    const double gap = ag - ar;  // > 0: the all-reduce is faster
    std::printf("B = %5.0f: allreduce %8.1f us (model %8.1f), allgather %8.1f us (model %8.1f)\n",
                sizes[i], ar * 1e6, model.AllReduce(sizes[i]) * 1e6, ag * 1e6,
                model.AllGather(sizes[i]) * 1e6);
    if (i == 0) {
      EXPECT_GT(gap, 0) << "at the smallest batch the all-reduce should win";
    } else if (previous_gap > 0 && gap <= 0) {
      crossover = sizes[i - 1] + (sizes[i] - sizes[i - 1]) * previous_gap / (previous_gap - gap);
      EXPECT_NEAR(ar / model.AllReduce(sizes[i]), 1.0, 0.15);
      EXPECT_NEAR(ag / model.AllGather(sizes[i]), 1.0, 0.15);
      break;
    }
    previous_gap = gap;
  }
  ASSERT_GT(crossover, 0) << "no crossover between B = 256 and 4096";
  std::printf("simulated crossover: B = %.0f\n", crossover);
  EXPECT_NEAR(crossover / predicted, 1.0, 0.2);
}

// Bytes over ICI per chip: what every link carried, over the chips (a transfer routed
// over h links counts h times).
double IciBytesPerChip(const dsl::RunResult& r, int chips) {
  double bytes = 0;
  for (const auto& link : r.stats.links)
    bytes += static_cast<double>(link.bytes);
  return bytes / chips;
}

// The four mlp layouts at their defaults (B = D = 1024, H = 4096) on the 8-way axis.
// What each sharding implies, checked: replicated and DP move nothing over ICI; FSDP moves
// at least the (X-1)/X of both weights each chip lacks, TP at least the psum's
// 2 (X-1)/X of the [B, D] partial; DP is faster than replicated, but by less than X; peak HBM
// per chip falls from replicated (everything) to DP (weights whole) to FSDP (weights
// sharded, one layer gathered at a time) to TP (weights sharded, nothing gathered).
TEST(Mlp, LayoutsReportTimeIciBytesAndPeakHbm) {
  const dsl::Mesh mesh = EightChipRow();
  const double x = 8, b = 1024, d = 1024, h = 4096;
  struct Row {
    std::string layout;
    double seconds, ici, hbm;
  };
  std::vector<Row> rows;
  for (const char* layout : {"replicated", "dp", "fsdp", "tp"}) {
    const dsl::RunResult r = RunTimingOnly(std::string("mlp/") + layout, mesh);
    const double peak =
        static_cast<double>(*std::max_element(r.peak_hbm_bytes.begin(), r.peak_hbm_bytes.end()));
    rows.push_back({layout, Seconds(r), IciBytesPerChip(r, mesh.devices()), peak});
    std::printf("mlp/%-10s time %8.1f us  ICI %8.2f MB/chip  peak HBM %7.2f MB/chip\n", layout,
                rows.back().seconds * 1e6, rows.back().ici / 1e6, rows.back().hbm / 1e6);
  }
  const Row &replicated = rows[0], &dp = rows[1], &fsdp = rows[2], &tp = rows[3];
  EXPECT_EQ(replicated.ici, 0);
  EXPECT_EQ(dp.ici, 0);
  EXPECT_GE(fsdp.ici, 2 * (2 * d * h) * (x - 1) / x);
  EXPECT_GE(tp.ici, 2 * (2 * b * d) * (x - 1) / x);
  // DP cannot beat perfect scaling; it falls short of it because each chip's 128 rows
  // leave its dots HBM-bound on reading the whole weights (2 x 128 x 1024 x 4096 FLOPs
  // over 8 MiB of W1: ~128 FLOP per byte, under v5e's ridge of ~240, docs/references.md §1).
  EXPECT_GE(dp.seconds, replicated.seconds / x);
  EXPECT_LT(dp.seconds, replicated.seconds / 2);
  EXPECT_GT(fsdp.seconds, dp.seconds);
  // Every layout holds at least its own inputs.
  EXPECT_GE(replicated.hbm, 2 * (b * d + 2 * d * h));
  EXPECT_GE(dp.hbm, 2 * (b * d / x + 2 * d * h));
  EXPECT_GE(fsdp.hbm, 2 * (b * d / x + 2 * d * h / x + d * h));
  EXPECT_GE(tp.hbm, 2 * (b * d + 2 * d * h / x));
  EXPECT_GT(replicated.hbm, dp.hbm);
  EXPECT_GT(dp.hbm, fsdp.hbm);
  EXPECT_GT(fsdp.hbm, tp.hbm);
}

}  // namespace
}  // namespace tpusim
