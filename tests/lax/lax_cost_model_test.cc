// The lax collectives' cost estimate (kernels/lax/cost_model.h) prices every link as the model
// does: the die-to-die (D2D) link on a chiplet axis, the hosts' NICs and the DCN's latency on
// the slice axis of a multi-slice topology, and the twisted wiring's routes on a twisted torus.
// Each test checks the estimate's terms against the topology's figures exactly, and sets the
// estimate beside the simulated time of the same collective with a stated tolerance (the
// simulation adds what the estimate leaves out: the own shard's copy into place, which the
// fidelity tests' formulas add too, and the DMA chunks' pipeline).

#include <gtest/gtest.h>

#include "kernels/lax/calls.h"
#include "kernels/lax/cost_model.h"
#include "kernels/lax/plan.h"
#include "sim/torus.h"
#include "tests/lax/lax_support.h"
#include "topologies/topology_loader.h"
#include "topologies/twist.h"

namespace tpusim {
namespace {

using dsl::DType;
using kernels::lax::Algorithm;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;
using testing::LaxSpec;

struct Compared {
  kernels::lax::CollectiveCost estimate;
  double simulated_s;
};

// `spec` with `algorithm` on per-device bf16 x of `shape`: the planner's estimate and the
// simulated time (timing only).
Compared Compare(const dsl::Mesh& mesh, CollectiveSpec spec, Algorithm algorithm,
                 const dsl::Shape& shape) {
  spec.algorithm = algorithm;
  const dsl::ShapeDtype x{shape, DType::kBF16};
  const auto plan = kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, spec, x), x);
  const testing::LaxRun run = testing::RunLax(mesh, spec, shape, DType::kBF16, false);
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return {plan.cost, static_cast<double>(run.result.time()) * 1e-12};
}

// The own shard into place before the steps: read and written in HBM.
double OwnCopy(const dsl::Mesh& mesh, double shard_bytes) {
  return 2 * shard_bytes / mesh.topology().chip().hbm().bandwidth_bytes_per_s();
}

void ExpectNearSimulated(const Compared& c, double copy, double tolerance, const char* what) {
  const double predicted = c.estimate.seconds() + copy;
  EXPECT_NEAR(c.simulated_s / predicted, 1, tolerance)
      << what << ": simulated " << c.simulated_s << " s, estimate " << c.estimate.seconds()
      << " s + copy " << copy << " s";
}

// TPU7x-2x2x1 (docs/model.md, "Chiplets"): an all-gather over the two chiplets of every chip
// by ring is one step of the 1 MiB shard over the D2D link, which is 12 times an ICI link's
// bandwidth and a tenth of its latency. The estimate's bandwidth part is s over the D2D
// bandwidth; its latency part the launch, the barrier and the step, each one D2D hop and the
// signal latency, and the step's issue latency. Simulated: within 3% of the estimate plus
// the copy.
TEST(LaxCostModelAxes, AllGatherOverTheChipletAxisRunsAtTheD2dLinksSpeed) {
  const dsl::Mesh mesh(topologies::LoadTopology("tpu7x-2x2x1"));
  const auto& t = mesh.topology();
  const double s = 1 << 20;
  const Compared c = Compare(mesh, LaxSpec(Collective::kAllGather, {"chiplet"}, 0, true),
                             Algorithm::kRing, {512, 1024});
  const double d2d = t.chiplets().d2d_bandwidth_bytes_per_s();
  const double hop = t.chiplets().d2d_latency_ns() * 1e-9;
  const double signal = t.ici().signal_latency_ns() * 1e-9;
  const double issue = t.chip().dma().issue_latency_ns() * 1e-9;
  const double launch = t.chip().cost().op_launch_ns() * 1e-9;
  EXPECT_NEAR(c.estimate.bandwidth_s, s / d2d, 1e-15);
  EXPECT_NEAR(c.estimate.latency_s, launch + 2 * (hop + signal) + issue, 1e-15);
  ExpectNearSimulated(c, OwnCopy(mesh, s), 0.03, "all_gather over chiplet");
}

// v5p-2x2x1 twice over the DCN (docs/model.md, "Multi-slice"): an all-gather over the slice
// axis by ring is one step in which every chip sends its 1 MiB shard to its counterpart in
// the other slice. A v5p host holds all 4 chips of a slice, so the 4 shards share its NIC out
// and the other host's NIC in: the bandwidth part is 4 s over the NIC's bandwidth, and the
// latency part pays the DCN's latency (not an ICI hop's) in the barrier and in the step.
// Simulated: within 3% of the estimate plus the copy.
TEST(LaxCostModelAxes, AllGatherOverTheSliceAxisSharesTheHostsNics) {
  const dsl::Mesh mesh(
      topologies::WithSlices(topologies::LoadTopology("v5p-2x2x1"), 2, "v5p-2x2x1"));
  const auto& t = mesh.topology();
  ASSERT_EQ(t.dcn().chips_per_host(), 4u);
  const double s = 1 << 20;
  const Compared c = Compare(mesh, LaxSpec(Collective::kAllGather, {"slice"}, 0, true),
                             Algorithm::kRing, {512, 1024});
  const double nic = t.dcn().nic_bandwidth_bytes_per_s();
  const double dcn = t.dcn().latency_ns() * 1e-9;
  const double signal = t.ici().signal_latency_ns() * 1e-9;
  const double issue = t.chip().dma().issue_latency_ns() * 1e-9;
  const double launch = t.chip().cost().op_launch_ns() * 1e-9;
  EXPECT_NEAR(c.estimate.bandwidth_s, 4 * s / nic, 1e-15);
  EXPECT_NEAR(c.estimate.latency_s, launch + 2 * (dcn + signal) + issue, 1e-15);
  ExpectNearSimulated(c, OwnCopy(mesh, s), 0.03, "all_gather over slice");
}

// Three slices: every slice reaches every other in one crossing of the DCN, so the slice axis
// is a closed ring (not the line its missing wraparound flag would make it), and a route
// crosses the DCN once, not once per slice in between.
TEST(LaxCostModelAxes, TheDcnJoinsEverySliceToEveryOtherInOneCrossing) {
  const dsl::Mesh mesh(
      topologies::WithSlices(topologies::LoadTopology("v5p-2x2x1"), 3, "v5p-2x2x1"));
  const kernels::lax::CostModel cm(mesh);
  const int last = mesh.DeviceAt({2, 1, 1, 0});
  EXPECT_EQ(cm.Hops(0, mesh.DeviceAt({2, 0, 0, 0})), 1);
  EXPECT_EQ(cm.Hops(0, last), 3);  // the DCN, then x and y in the last slice
  const auto& t = mesh.topology();
  EXPECT_NEAR(cm.RouteLatency(0, last),
              t.dcn().latency_ns() * 1e-9 + 2 * t.ici().hop_latency_ns() * 1e-9, 1e-15);
  const dsl::ShapeDtype x{{512}, DType::kBF16};
  const CollectiveSpec spec =
      kernels::lax::Checked(mesh, LaxSpec(Collective::kAllGather, {"slice"}, 0, true), x);
  EXPECT_TRUE(kernels::lax::PlanCollective(mesh, spec, x).stages.at(0).closed);
}

// v4-4x4x8-twisted (docs/model.md, "Twisted tori"): the estimate walks the model's routes
// (sim/torus.h), so it counts the hops the twisted wiring takes between every pair of chips,
// and some pairs are nearer than on the plain torus.
TEST(LaxCostModelAxes, CountsTheTwistedWiringsHops) {
  const dsl::Mesh mesh(topologies::LoadTopology("v4-4x4x8-twisted"));
  const auto& m = mesh.topology().mesh();
  const sim::Torus torus(mesh.grid(),
                         std::vector<bool>(m.wraparound().begin(), m.wraparound().end()),
                         topologies::TwistShifts(mesh.shape()));
  const sim::Torus plain(mesh.grid(),
                         std::vector<bool>(m.wraparound().begin(), m.wraparound().end()));
  const kernels::lax::CostModel cm(mesh);
  int nearer = 0;
  for (int from = 0; from < mesh.devices(); ++from) {
    for (int to = 0; to < mesh.devices(); ++to) {
      const auto hops = static_cast<int>(
          torus.Route(static_cast<base::ChipId>(from), static_cast<base::ChipId>(to)).size());
      ASSERT_EQ(cm.Hops(from, to), hops) << from << " to " << to;
      if (hops <
          static_cast<int>(
              plain.Route(static_cast<base::ChipId>(from), static_cast<base::ChipId>(to)).size()))
        ++nearer;
    }
  }
  EXPECT_GT(nearer, 0);
}

// A ppermute from chip (0, 0, 0) to (2, 0, 4), 6 hops apart on the plain torus and fewer
// across x's twisted wraparound: the estimate on the twisted preset is below the plain one's
// by the hops it saves (one hop latency each, in the barrier and in the send), and the
// simulated time is within 2% of the estimate (a ppermute copies no own shard).
TEST(LaxCostModelAxes, PricesAPpermuteAcrossTheTwistByItsRoute) {
  const auto estimate = [](const std::string& preset) {
    const dsl::Mesh mesh(topologies::LoadTopology(preset));
    CollectiveSpec spec = LaxSpec(Collective::kPpermute, {}, 0, false);
    std::vector<int> everyone(static_cast<size_t>(mesh.devices()));
    for (int d = 0; d < mesh.devices(); ++d)
      everyone[static_cast<size_t>(d)] = d;
    spec.groups = {everyone};
    spec.perm = {{0, mesh.DeviceAt({2, 0, 4})}};
    return std::pair{Compare(mesh, spec, Algorithm::kDirect, {512}),
                     kernels::lax::CostModel(mesh).Hops(0, mesh.DeviceAt({2, 0, 4}))};
  };
  const auto [twisted, twisted_hops] = estimate("v4-4x4x8-twisted");
  const auto [plain, plain_hops] = estimate("v4-4x4x8");
  ASSERT_EQ(plain_hops, 6);
  ASSERT_LT(twisted_hops, plain_hops);
  EXPECT_LT(twisted.estimate.latency_s, plain.estimate.latency_s);
  ExpectNearSimulated(twisted, 0, 0.02, "ppermute across the twist");
  ExpectNearSimulated(plain, 0, 0.02, "ppermute on the plain torus");
}

}  // namespace
}  // namespace tpusim
