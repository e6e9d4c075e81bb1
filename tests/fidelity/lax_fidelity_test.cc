// Layer 3 for the lax collectives (kernels/lax/collectives.h): their simulated times
// against docs/references.md §3, with the tolerance written beside each formula. Timing-only
// runs on the v5e-16x16 preset (X = 16 with wraparound); functional and timing-only runs
// time alike (tests/unit/dma_timing_test.cc).

#include <gtest/gtest.h>

#include "kernels/lax/collectives.h"
#include "tests/lax/lax_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using dsl::DType;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;

double Seconds(const testing::LaxRun& run) {
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return static_cast<double>(run.result.time()) * 1e-12;
}

double TimeOf(const dsl::Mesh& mesh, const CollectiveSpec& spec, const dsl::Shape& shape,
              DType dtype) {
  return Seconds(testing::RunLax(mesh, spec, shape, dtype, /*functional=*/false));
}

using testing::LaxSpec;

// docs/references.md §3: the bidirectional ring all-gather on an axis with wraparound takes
// T = V/W_ici for large X (W_ici = 2 W_oneway). The lax all_gather (bidi_ring, chosen at this
// size) sends every shard floor((X-1)/2) hops each way and the opposite one half each way,
// in X/2 steps, so its exact form is (V/W_ici)(X-1)/X + (X/2) T_step, plus the own-shard copy
// into place (2 V/X bytes through the HBM port), the start barrier (one more step) and the
// launch; a step is a hop and the remote semaphore's signal latency (docs/time-model.md).
// Tolerance: 97-103% of the exact form, and the bandwidth part (the time without the steps
// and the launch) between (X-1)/X - 1% and 103% of SB's V/W_ici. Untiled along a new leading
// dim (contiguous blocks) and tiled along the last dim (each block a strided box of rows):
// the same bytes, the same time.
class LaxAllGatherOnWraparoundAxis : public ::testing::TestWithParam<bool> {};

TEST_P(LaxAllGatherOnWraparoundAxis, MatchesSbsFormula) {
  const bool tiled = GetParam();
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-16x16"));
  const auto& t = mesh.topology();
  const double oneway = t.ici().link_bandwidth_bytes_per_s();
  const double step = (t.ici().hop_latency_ns() + t.ici().signal_latency_ns()) * 1e-9;
  const double launch = t.chip().cost().op_launch_ns() * 1e-9;
  const double hbm = t.chip().hbm().bandwidth_bytes_per_s();
  const double x = 16;
  const dsl::Shape shard = {2048, 1024};  // bf16: 4 MiB per device, V = 64 MiB
  const double v = x * 2048 * 1024 * 2;
  const double seconds = TimeOf(mesh, LaxSpec(Collective::kAllGather, {"x"}, tiled ? 1 : 0, tiled),
                                shard, DType::kBF16);
  const double w_ici = 2 * oneway;
  const double steps = x / 2 + 1;
  const double exact = v / w_ici * (x - 1) / x + steps * step + launch + 2 * (v / x) / hbm;
  EXPECT_GE(exact / seconds, 0.97) << "time " << seconds << " s, exact " << exact << " s";
  EXPECT_LE(exact / seconds, 1.03) << "time " << seconds << " s, exact " << exact << " s";
  const double sb = v / w_ici;
  const double bandwidth_part = seconds - steps * step - launch;
  EXPECT_GE(bandwidth_part / sb, (x - 1) / x - 0.01)
      << "bandwidth part " << bandwidth_part << " s, SB " << sb << " s";
  EXPECT_LE(bandwidth_part / sb, 1.03)
      << "bandwidth part " << bandwidth_part << " s, SB " << sb << " s";
}

INSTANTIATE_TEST_SUITE_P(Layout, LaxAllGatherOnWraparoundAxis, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "tiled_last" : "untiled"; });

// docs/references.md §3: all-reduce = 2 x reduce-scatter. psum runs the ring reduce-scatter
// and then the ring all-gather of the reduced blocks, and each moves (V/W_ici)(X-1)/X;
// the reduce-scatter also pays its chunk pipeline's fill (one chunk's add and hop) and the
// all-gather its X-1 hop latencies. Tolerance: psum / psum_scatter within 2 +- 0.1.
TEST(LaxPsum, TakesTwicePsumScatter) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-16x16"));
  const dsl::Shape x = {16, 1 << 20};  // bf16: 32 MiB per device
  const double scatter =
      TimeOf(mesh, LaxSpec(Collective::kPsumScatter, {"x"}, 0, false), x, DType::kBF16);
  const double psum = TimeOf(mesh, LaxSpec(Collective::kPsum, {"x"}, 0, false), x, DType::kBF16);
  EXPECT_NEAR(psum / scatter, 2.0, 0.1) << "psum " << psum << " s, psum_scatter " << scatter;
}

// docs/references.md §3: reduce-scatter = all-gather time, (V/W_ici)(X-1)/X for V the bytes
// each device reduces, with wraparound. On top come the chunk pipeline's fill (the first
// chunk's hop and add before the link streams), one step (a hop and the remote semaphore's
// signal latency) per ring step and the launch; the formula adds the steps and the launch.
// Tolerance: 100-110% of the formula. A tiled scatter of the last dim reduces strided [rows, cols]
// boxes instead of contiguous blocks: the same bytes, so within 5% of the contiguous time.
TEST(LaxPsumScatter, TakesTheAllGatherTimeForContiguousAndStridedBlocks) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-16x16"));
  const double x = 16;
  const double v = 16.0 * (1 << 20) * 2;  // bf16 [16, 2^20]: 32 MiB per device
  const auto& t = mesh.topology();
  const double w_ici = 2 * t.ici().link_bandwidth_bytes_per_s();
  const double step = (t.ici().hop_latency_ns() + t.ici().signal_latency_ns()) * 1e-9;
  const double formula =
      v / w_ici * (x - 1) / x + (x - 1) * step + t.chip().cost().op_launch_ns() * 1e-9;
  const double contiguous =
      TimeOf(mesh, LaxSpec(Collective::kPsumScatter, {"x"}, 0, false), {16, 1 << 20}, DType::kBF16);
  EXPECT_GE(contiguous / formula, 1.0) << "time " << contiguous << " s, formula " << formula;
  EXPECT_LE(contiguous / formula, 1.10) << "time " << contiguous << " s, formula " << formula;
  const double strided =
      TimeOf(mesh, LaxSpec(Collective::kPsumScatter, {"x"}, 1, true), {16, 1 << 20}, DType::kBF16);
  EXPECT_NEAR(strided, contiguous, 0.05 * contiguous) << "strided " << strided << " s";
}

}  // namespace
}  // namespace tpusim
