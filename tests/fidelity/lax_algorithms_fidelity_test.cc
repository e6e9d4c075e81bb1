// Layer 3 for the lax collectives' algorithms (kernels/lax/gather.h, staged.h): each one's
// simulated time against its formula in docs/references.md §3's terms, with the tolerance
// beside it; and the choice the planner makes (kernels/lax/plan.h): small operands get a
// latency-optimal form, large ones a bandwidth-optimal ring. Timing-only runs.
//
// Notation: X devices on the axis, s = V/X the shard, T the per-hop latency
// (ici.hop_latency_ns), S what a step's remote semaphore adds on top of its hops (the signal
// latency, ici.signal_latency_ns, and the DMA issue latency, chip.dma.issue_latency_ns), L
// the kernel's launch (chip.cost.op_launch_ns, once per call), W the one-way link bandwidth,
// H the HBM bandwidth (docs/time-model.md). Every kernel starts with a barrier with the
// devices it will send to, which costs the longest of those routes and S once.

#include <gtest/gtest.h>

#include "kernels/lax/calls.h"
#include "kernels/lax/plan.h"
#include "tests/lax/lax_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using dsl::DType;
using kernels::lax::Algorithm;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;
using testing::LaxSpec;

struct Links {
  double t, s, launch, w, hbm;
};

Links LinksOf(const dsl::Mesh& mesh) {
  const auto& topology = mesh.topology();
  return {topology.ici().hop_latency_ns() * 1e-9,
          (topology.ici().signal_latency_ns() + topology.chip().dma().issue_latency_ns()) * 1e-9,
          topology.chip().cost().op_launch_ns() * 1e-9, topology.ici().link_bandwidth_bytes_per_s(),
          topology.chip().hbm().bandwidth_bytes_per_s()};
}

// Simulated seconds of `spec` (with `algorithm`, or the planner's choice) on x.
double Seconds(const dsl::Mesh& mesh, CollectiveSpec spec, const dsl::Shape& shape,
               std::optional<Algorithm> algorithm = std::nullopt) {
  spec.algorithm = algorithm;
  const testing::LaxRun run = testing::RunLax(mesh, spec, shape, DType::kBF16, false);
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return static_cast<double>(run.result.time()) * 1e-12;
}

Algorithm Chosen(const dsl::Mesh& mesh, const CollectiveSpec& spec, const dsl::Shape& shape) {
  const dsl::ShapeDtype x{shape, DType::kBF16};
  const CollectiveSpec c = kernels::lax::Checked(mesh, spec, x);
  return kernels::lax::PlanCollective(mesh, c, x).stages.at(0).algorithm;
}

void ExpectWithin(double seconds, double formula, double below, double above,
                  const std::string& what) {
  EXPECT_GE(seconds / formula, 1 - below) << what << ": " << seconds << " s, formula " << formula;
  EXPECT_LE(seconds / formula, 1 + above) << what << ": " << seconds << " s, formula " << formula;
}

// All-gathers of V = 16 MiB (s = 1 MiB) round a closed ring of X = 16 (v5e-16x16's x).
class AllGatherOnAClosedRing : public ::testing::Test {
 protected:
  const dsl::Mesh mesh{topologies::LoadTopology("v5e-16x16")};
  const Links l = LinksOf(mesh);
  const double x = 16, s = 1 << 20;
  const dsl::Shape shard = {512, 1024};  // bf16: 1 MiB
  const CollectiveSpec spec = LaxSpec(Collective::kAllGather, {"x"}, 0, true);
  const double copy = 2 * s / l.hbm;  // the own shard into place, read and written
};

// ring: X-1 steps, each a shard over one link: (X-1)(T + S + s/W) + (T + S) + L + the copy.
// ±2%.
TEST_F(AllGatherOnAClosedRing, RingTakesXMinusOneHopsAndShards) {
  const double formula = (x - 1) * (l.t + l.s + s / l.w) + l.t + l.s + l.launch + copy;
  ExpectWithin(Seconds(mesh, spec, shard, Algorithm::kRing), formula, 0.02, 0.02, "ring");
}

// bidi_ring: (V/W_ici)(X-1)/X in X/2 steps: s/(2W) + (X/2 + 1)(T + S) + L + the copy.
// ±2%.
TEST_F(AllGatherOnAClosedRing, BidiRingTakesHalfTheHopsAndBothDirections) {
  const double formula = (x - 1) * s / (2 * l.w) + (x / 2 + 1) * (l.t + l.s) + l.launch + copy;
  ExpectWithin(Seconds(mesh, spec, shard, Algorithm::kBidiRing), formula, 0.02, 0.02, "bidi_ring");
}

// direct: one step. Shards going d = 1 .. X/2 hops the + way (ties go +) all cross the
// busiest link: s (1 + 2 + ... + X/2)/W, plus X/2 hops and S for the barrier and the same
// for the sends, and L. ±3%.
TEST_F(AllGatherOnAClosedRing, DirectSendsEverythingAtOnce) {
  const double crossing = x / 2 * (x / 2 + 1) / 2;  // 36
  const double formula = crossing * s / l.w + x * l.t + 2 * l.s + l.launch + copy;
  ExpectWithin(Seconds(mesh, spec, shard, Algorithm::kDirect), formula, 0.03, 0.03, "direct");
}

// recursive_doubling: step k sends 2^k shards 2^k hops; up to 2^k of those transfers share a
// link, so a step moves 4^k s over it: s (1 + 4 + 16 + 64)/W, plus 1 + 2 + 4 + 8 hops and
// the barrier's 8, S for each of the 4 steps and the barrier, and L. ±3%.
TEST_F(AllGatherOnAClosedRing, RecursiveDoublingSquaresItsDistances) {
  const double formula = 85 * s / l.w + (15 + 8) * l.t + 5 * l.s + l.launch + copy;
  ExpectWithin(Seconds(mesh, spec, shard, Algorithm::kRecursiveDoubling), formula, 0.03, 0.03,
               "recursive_doubling");
}

// On a line (v5e-8x16's x: 8 chips, no wraparound) bidi_ring sends every shard to both ends:
// X-1 steps of one hop and one shard each way: (X-1)(T + S + s/W) + (T + S) + L, the
// one-direction figure of §3 without the long way round. 8 KiB (the issue's case, 56 us with
// halves sent round the ring the long way, before the signal latency and the launch): ±2%.
TEST(LaxAllGatherOnALine, BidiRingRunsAlongTheLineBothWays) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-8x16"));
  const Links l = LinksOf(mesh);
  const double x = 8, s = 1024;
  const CollectiveSpec spec = LaxSpec(Collective::kAllGather, {"x"}, 0, true);
  const double formula = (x - 1) * (l.t + l.s + s / l.w) + l.t + l.s + l.launch + 2 * s / l.hbm;
  ExpectWithin(Seconds(mesh, spec, {512}, Algorithm::kBidiRing), formula, 0.02, 0.02,
               "bidi_ring on a line");
}

// All-reduces round a closed ring of 16 (v5e-16x16's x).
class PsumOnAClosedRing : public ::testing::Test {
 protected:
  const dsl::Mesh mesh{topologies::LoadTopology("v5e-16x16")};
  const Links l = LinksOf(mesh);
  const double x = 16;
  const CollectiveSpec spec = LaxSpec(Collective::kPsum, {"x"});
};

// bidi_ring: reduce-scatter (X-1 steps, half of every block each way) then the all-gather
// (X/2 steps): 2 (V/W_ici)(X-1)/X + (X-1 + X/2 + 1)(T + S) + L. V = 4 MiB: -1% +3% (the
// chunk pipeline's fill and the VPU adds on top).
TEST_F(PsumOnAClosedRing, BidiRingIsTwiceTheAllGather) {
  const double v = 4 << 20;
  const double formula =
      2 * v / (2 * l.w) * (x - 1) / x + (x - 1 + x / 2 + 1) * (l.t + l.s) + l.launch;
  ExpectWithin(Seconds(mesh, spec, {2 << 20}, Algorithm::kBidiRing), formula, 0.01, 0.03,
               "bidi_ring");
}

// direct: X/2 hops and S of barrier, X/2 hops and S of sends, and L; the links' share,
// V (1 + ... + X/2)/W when every send crosses the busiest link at once, is an upper bound:
// sends from farther away reach it later. V = 1 KiB: between 2 (X/2 T + S) + L and that plus
// the links' share (+3%).
TEST_F(PsumOnAClosedRing, DirectTakesTheFarthestRouteTwice) {
  const double v = 1024;
  const double hops = x * l.t + 2 * l.s + l.launch, links = v * (x / 2) * (x / 2 + 1) / 2 / l.w;
  const double seconds = Seconds(mesh, spec, {512}, Algorithm::kDirect);
  EXPECT_GE(seconds, hops) << seconds;
  EXPECT_LE(seconds, 1.03 * (hops + links)) << seconds;
}

// recursive_doubling: log2 X steps of 1, 2, 4, 8 hops after a barrier of 8: 23 T and 5 S,
// and L, plus up to (1 + 2 + 4 + 8) V/W of link time. V = 1 KiB: 23 T + 5 S + L to
// 1.03 x (that + 15 V/W).
TEST_F(PsumOnAClosedRing, RecursiveDoublingTakesLogXSteps) {
  const double v = 1024;
  const double latency = 23 * l.t + 5 * l.s + l.launch;
  const double seconds = Seconds(mesh, spec, {512}, Algorithm::kRecursiveDoubling);
  EXPECT_GE(seconds, latency) << seconds;
  EXPECT_LE(seconds, 1.03 * (latency + 15 * v / l.w)) << seconds;
}

// Over both axes of v5e-16x16, XLA's decomposition: reduce-scatter along x (V), then y (V/X),
// all-gather y, then x. With bidi_ring stages: 2 (V/W_ici)(X-1)/X (1 + 1/X) plus each stage's
// steps (T + S each), the barrier and L. V = 4 MiB: -1% +4%.
TEST(LaxPsumOverTwoAxes, ReduceScattersAlongOneAxisThenTheOther) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-16x16"));
  const Links l = LinksOf(mesh);
  const double x = 16, v = 4 << 20;
  const CollectiveSpec spec = LaxSpec(Collective::kPsum, {"x", "y"});
  const double bandwidth = 2 * v / (2 * l.w) * (x - 1) / x * (1 + 1 / x);
  const double hops = (2 * (x - 1 + x / 2) + 1) * (l.t + l.s) + l.launch;
  ExpectWithin(Seconds(mesh, spec, {2 << 20}, Algorithm::kBidiRing), bandwidth + hops, 0.01, 0.04,
               "two-axis psum");
}

// The planner: small operands take a latency-optimal form, large ones a ring. On v5e-8x16's
// x (a line of 8, the issue's case: a 1 KiB psum took 105 us with one algorithm for all
// sizes) and round v5e-16x16's x.
TEST(LaxPlanChoice, SmallPsumsTakeALatencyFormAndLargeOnesARing) {
  for (const char* topology : {"v5e-8x16", "v5e-16x16"}) {
    const dsl::Mesh mesh(topologies::LoadTopology(topology));
    const CollectiveSpec spec = LaxSpec(Collective::kPsum, {"x"});
    const dsl::Shape small = {512}, large = {32 << 20};  // bf16: 1 KiB, 64 MiB
    const Algorithm for_small = Chosen(mesh, spec, small), for_large = Chosen(mesh, spec, large);
    EXPECT_TRUE(for_small == Algorithm::kDirect || for_small == Algorithm::kRecursiveDoubling)
        << topology << ": " << kernels::lax::AlgorithmName(for_small);
    EXPECT_TRUE(for_large == Algorithm::kRing || for_large == Algorithm::kBidiRing)
        << topology << ": " << kernels::lax::AlgorithmName(for_large);
    // And each choice is the faster by far where it is made (a ring's 2(X-1) steps against a
    // latency form's one or log2 X).
    EXPECT_LT(1.5 * Seconds(mesh, spec, small), Seconds(mesh, spec, small, Algorithm::kRing))
        << topology;
    EXPECT_LT(3 * Seconds(mesh, spec, large), Seconds(mesh, spec, large, Algorithm::kDirect))
        << topology;
    EXPECT_LT(Seconds(mesh, spec, small), 25e-6) << topology;
  }
}

// A small all-gather on a line takes the form with the fewest remote signals. Each costs S
// (2.8 us on the presets) beside a 1 us hop, so direct's two (the barrier and the sends, X-1
// hops each) beat bidi_ring's X (X-1 one-hop steps and the barrier) and recursive doubling's
// four (three steps after a barrier of 4 hops). The 8 KiB case of the issue (56 us with halves
// sent the long way, 8 us along the line before the signal latency): chosen direct, within
// 2 T + 2 S + L and that plus the busiest link's 16 shards and the copy (+3%), and the
// fastest of the four.
TEST(LaxPlanChoice, SmallAllGatherOnALineTakesTheFewestSignals) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-8x16"));
  const Links l = LinksOf(mesh);
  const double x = 8, s = 1024;
  const CollectiveSpec spec = LaxSpec(Collective::kAllGather, {"x"}, 0, true);
  const dsl::Shape shard = {512};  // bf16: V = 8 KiB
  ASSERT_EQ(Chosen(mesh, spec, shard), Algorithm::kDirect);
  const double chosen = Seconds(mesh, spec, shard);
  const double latency = 2 * (x - 1) * l.t + 2 * l.s + l.launch;
  EXPECT_GE(chosen, latency);
  EXPECT_LE(chosen, 1.03 * (latency + 16 * s / l.w + 2 * s / l.hbm));
  for (Algorithm a : kernels::lax::AllAlgorithms())
    EXPECT_LE(chosen, Seconds(mesh, spec, shard, a)) << kernels::lax::AlgorithmName(a);
}

// collective_broadcast round a closed ring of X = 16 (v5e-16x16's x): the root (device 0)
// sends V to the 15 others. Every device first meets the devices it sends to (the barrier:
// the longest such route's hops and S).
class BroadcastOnAClosedRing : public ::testing::Test {
 protected:
  const dsl::Mesh mesh{topologies::LoadTopology("v5e-16x16")};
  const Links l = LinksOf(mesh);
  const CollectiveSpec spec = LaxSpec(Collective::kBroadcast, {"x"});
};

// direct, V = 64 KiB: one step. The sends to +1 .. +8 (ties go +) all leave over the root's
// + link, which carries them one after another in the order they start (each is less than
// one interleaving chunk, chip.dma.chunk_bytes): farthest first, so the last to land is the
// one to +1, after 8 V/W and one hop, and S. Plus the barrier (8 hops and S) and L. ±3%.
TEST_F(BroadcastOnAClosedRing, DirectSendsEveryCopyFromTheRoot) {
  const double v = 64 << 10;
  const double formula = 8 * v / l.w + (8 + 1) * l.t + 2 * l.s + l.launch;
  ExpectWithin(Seconds(mesh, spec, {32, 1024}, Algorithm::kDirect), formula, 0.03, 0.03, "direct");
}

// recursive_doubling, V = 64 KiB: a binomial tree whose distances halve (8, 4, 2, 1 hops), so
// no two of a step's transfers share a link. The last device gets V after 15 hops, 4 S and 4
// V/W; the barrier (children meet parents) adds the longest, 8 hops, and S; and L. ±3%.
TEST_F(BroadcastOnAClosedRing, RecursiveDoublingIsATreeOfHalvingDistances) {
  const double v = 64 << 10;
  const double formula = 4 * v / l.w + (15 + 8) * l.t + 5 * l.s + l.launch;
  ExpectWithin(Seconds(mesh, spec, {32, 1024}, Algorithm::kRecursiveDoubling), formula, 0.03, 0.03,
               "recursive_doubling");
}

// bidi_ring, V = 16 MiB (b = V/X = 1 MiB): the root scatters one block to each member (8 of
// them over its + link: 8 b/W, 8 hops and S), then the members all-gather the blocks both
// ways round the ring ((X-1) b/(2W) + (X/2)(T + S), as the all-gather's bidi_ring): about
// 15.5 b/W, under V/W, where direct would take 8 V/W. Plus the barrier (8 hops, S) and L.
// ±3%.
TEST_F(BroadcastOnAClosedRing, BidiRingScattersThenAllGathers) {
  const double b = 1 << 20;
  const double formula =
      8 * b / l.w + 15 * b / (2 * l.w) + (8 + 8 + 8) * l.t + (1 + 1 + 8) * l.s + l.launch;
  ExpectWithin(Seconds(mesh, spec, {8192, 1024}, Algorithm::kBidiRing), formula, 0.03, 0.03,
               "bidi_ring");
}

// The planner picks a latency form for a small broadcast and scatter + all-gather for a
// large one, and each is the faster there.
TEST(LaxPlanChoice, SmallBroadcastsTakeALatencyFormAndLargeOnesScatterAndGather) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-16x16"));
  const CollectiveSpec spec = LaxSpec(Collective::kBroadcast, {"x"});
  const dsl::Shape small = {512}, large = {8 << 20};  // bf16: 1 KiB, 16 MiB
  const Algorithm for_small = Chosen(mesh, spec, small), for_large = Chosen(mesh, spec, large);
  EXPECT_TRUE(for_small == Algorithm::kDirect || for_small == Algorithm::kRecursiveDoubling)
      << kernels::lax::AlgorithmName(for_small);
  EXPECT_TRUE(for_large == Algorithm::kRing || for_large == Algorithm::kBidiRing)
      << kernels::lax::AlgorithmName(for_large);
  EXPECT_LT(Seconds(mesh, spec, small), Seconds(mesh, spec, small, Algorithm::kRing));
  EXPECT_LT(3 * Seconds(mesh, spec, large), Seconds(mesh, spec, large, Algorithm::kDirect));
}

}  // namespace
}  // namespace tpusim
