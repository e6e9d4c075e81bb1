// Every algorithm of every lax collective (kernels/lax/algorithm.h) gives the host
// reference's result on every device: closed odd and even rings, open lines, 2- and 3-D
// meshes, several axes at once, replica groups that are not axes (scattered, odd, and boxes
// spanning two or three torus axes in any order), operands larger than the staging slots
// (several rounds), remainders that do not split into whole blocks, and each dtype. Every
// member of a collective_broadcast ends with its group's first member's x.
//
// Data movement must be exact. Sums: atol = u G (G + 1) for G devices summed
// (ReductionTolerance), whichever order the algorithm adds in; a pmean's atol is that over G
// plus one rounding of the mean.
//
// And the planner (kernels/lax/plan.h): what it decomposes and refuses, and that its estimate
// charges each latency term as the simulation does.

#include <gtest/gtest.h>

#include <functional>

#include "base/errors.h"
#include "kernels/lax/calls.h"
#include "kernels/lax/plan.h"
#include "kernels/reduce_scatter.h"
#include "tests/lax/lax_support.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using dsl::DType;
using kernels::lax::Algorithm;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;
using Case = testing::LaxCase;
using testing::LaxSpec;

CollectiveSpec Groups(Collective kind, std::vector<std::vector<int>> groups, int axis = 0,
                      bool tiled = false) {
  CollectiveSpec s{kind, {}};
  s.groups = std::move(groups);
  s.axis = axis;
  s.tiled = tiled;
  return s;
}

CollectiveSpec Reduce(Collective kind, std::vector<std::string> axes, kernels::Reduction r,
                      bool mean = false) {
  CollectiveSpec s = LaxSpec(kind, std::move(axes));
  s.reduction = r;
  s.mean = mean;
  return s;
}

std::vector<Case> Cases() {
  const auto ag = Collective::kAllGather, ps = Collective::kPsum, rs = Collective::kPsumScatter;
  const auto cb = Collective::kBroadcast;
  const auto sum = kernels::Reduction::kSum;
  // v5e-2x4: devices 0-3 on x=0, 4-7 on x=1.
  const std::vector<std::vector<int>> scattered = {{0, 5, 2, 7}, {1, 4, 3, 6}};
  const std::vector<std::vector<int>> whole = {{0, 1, 2, 3, 4, 5, 6, 7}};
  const std::vector<std::vector<int>> shuffled = {{7, 2, 5, 0, 3, 6, 1, 4}};
  // v4-4x4x4 (device = 16x + 4y + z): four groups, each the 4x4 box over x and y at one z.
  std::vector<std::vector<int>> planes(4);
  for (int z = 0; z < 4; ++z) {
    for (int x = 0; x < 4; ++x) {
      for (int y = 0; y < 4; ++y)
        planes[z].push_back(16 * x + 4 * y + z);
    }
  }
  return {
      // collective_broadcast: an odd ring, groups that are not axes, the whole mesh in a
      // shuffled order, and fewer elements than devices (some scattered blocks are empty).
      {"collective_broadcast_ring5", "ring5", LaxSpec(cb, {"x"}), {3, 5}, DType::kF32},
      {"collective_broadcast_scattered_groups",
       "v5e-2x4",
       Groups(cb, scattered),
       {4, 6},
       DType::kInt32},
      {"collective_broadcast_shuffled_mesh", "v5e-2x4", Groups(cb, shuffled), {3, 7}, DType::kF32},
      {"collective_broadcast_line6_two_elements", "line6", LaxSpec(cb, {"x"}), {2}, DType::kBF16},
      {"all_gather_ring5", "ring5", LaxSpec(ag, {"x"}, 0), {4, 8}, DType::kBF16},
      {"all_gather_line6_tiled_last", "line6", LaxSpec(ag, {"x"}, 1, true), {2, 3}, DType::kInt32},
      {"all_gather_mesh3x2_x", "mesh3x2", LaxSpec(ag, {"x"}, 0), {3, 5}, DType::kF32},
      {"all_gather_v5e_2x4_y_tiled",
       "v5e-2x4",
       LaxSpec(ag, {"y"}, 1, true),
       {8, 128},
       DType::kBF16},
      {"all_gather_scattered_groups", "v5e-2x4", Groups(ag, scattered), {3, 5}, DType::kF32},
      {"all_gather_box_of_the_mesh", "v5e-2x4", Groups(ag, whole, 0, true), {2, 3}, DType::kInt32},
      {"all_gather_box_shuffled", "v5e-2x4", Groups(ag, shuffled, 1), {4}, DType::kInt32},
      {"all_gather_v4_xy_planes", "v4-4x4x4", Groups(ag, planes, 0, true), {2, 4}, DType::kF32},
      {"psum_ring5_remainder", "ring5", LaxSpec(ps, {"x"}), {3, 7}, DType::kF32},
      {"psum_line6_bf16", "line6", LaxSpec(ps, {"x"}), {4, 6}, DType::kBF16},
      {"psum_mesh3x2_both_int32", "mesh3x2", LaxSpec(ps, {"x", "y"}), {6, 5}, DType::kInt32},
      {"psum_v5e_2x4_both_bf16", "v5e-2x4", LaxSpec(ps, {"x", "y"}), {8, 128}, DType::kBF16},
      {"psum_scattered_groups", "v5e-2x4", Groups(ps, scattered), {5, 6}, DType::kF32},
      {"psum_box_tail", "v5e-2x4", Groups(ps, whole), {9, 10}, DType::kF32},
      {"psum_v4_xy_planes", "v4-4x4x4", Groups(ps, planes), {3, 16}, DType::kInt32},
      {"pmax_mesh2x3x2_z_x",
       "mesh2x3x2",
       Reduce(ps, {"z", "x"}, kernels::Reduction::kMax),
       {7, 3},
       DType::kF32},
      {"pmin_v5e_2x4_y",
       "v5e-2x4",
       Reduce(ps, {"y"}, kernels::Reduction::kMin),
       {4, 9},
       DType::kBF16},
      {"pmean_v5e_2x4_y_bf16", "v5e-2x4", Reduce(ps, {"y"}, sum, true), {8, 16}, DType::kBF16},
      {"pmean_mesh3x2_both_int32",
       "mesh3x2",
       Reduce(ps, {"x", "y"}, sum, true),
       {5, 4},
       DType::kInt32},
      {"psum_many_rounds", "ring4_small_vmem", LaxSpec(ps, {"x"}), {16, 1000}, DType::kF32},
      {"psum_scatter_ring5_tiled_middle",
       "ring5",
       LaxSpec(rs, {"x"}, 1, true),
       {3, 10, 4},
       DType::kF32},
      {"psum_scatter_v5e_2x4_y", "v5e-2x4", LaxSpec(rs, {"y"}, 0), {4, 6}, DType::kInt32},
      {"psum_scatter_odd_groups",
       "mesh3x2",
       Groups(rs, {{0, 3, 5}, {1, 2, 4}}, 0, true),
       {6, 4},
       DType::kF32},
      {"psum_scatter_many_rounds",
       "ring4_small_vmem",
       LaxSpec(rs, {"x"}, 1),
       {3, 4, 4000},
       DType::kF32},
  };
}

struct AlgorithmCase {
  Case c;
  Algorithm algorithm;
};

void PrintTo(const AlgorithmCase& a, std::ostream* os) {
  *os << a.c.name << " " << kernels::lax::AlgorithmName(a.algorithm);
}

bool PowerOfTwoGroups(const Case& c) {
  const dsl::Mesh mesh(testing::LaxTopology(c.topology));
  const dsl::ShapeDtype x{c.shape, c.dtype};
  for (const auto& stage :
       kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, c.spec, x), x).stages) {
    const int n = stage.groups->group_size();
    if ((n & (n - 1)) != 0) return false;
  }
  return true;
}

// Every algorithm each case's collective implements; recursive_doubling only where every
// stage's groups have a power-of-two size (RefusesRecursiveDoubling... checks the others).
std::vector<AlgorithmCase> AlgorithmCases() {
  std::vector<AlgorithmCase> cases;
  for (const Case& c : Cases()) {
    for (Algorithm a : kernels::lax::AllAlgorithms()) {
      if (!kernels::lax::Implements(c.spec.kind, a)) continue;
      if (a == Algorithm::kRecursiveDoubling && !PowerOfTwoGroups(c)) continue;
      cases.push_back({c, a});
    }
  }
  return cases;
}

int SummedDevices(const dsl::Mesh& mesh, const CollectiveSpec& spec) {
  return kernels::lax::GroupsOf(mesh, spec).group_size();
}

class LaxAlgorithm : public ::testing::TestWithParam<AlgorithmCase> {};

TEST_P(LaxAlgorithm, MatchesTheHostReferenceOnEveryDevice) {
  const Case& c = GetParam().c;
  const dsl::Mesh mesh(testing::LaxTopology(c.topology));
  CollectiveSpec spec = c.spec;
  spec.algorithm = GetParam().algorithm;
  const dsl::ShapeDtype x{c.shape, c.dtype};
  const kernels::lax::CollectivePlan plan =
      kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, spec, x), x);
  for (const auto& stage : plan.stages)
    EXPECT_EQ(stage.algorithm, spec.algorithm);
  testing::LaxRun run = testing::RunLax(mesh, spec, c.shape, c.dtype);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const std::vector<dsl::Array> expected = kernels::lax::Reference(mesh, spec, run.shards);
  const bool sums = c.spec.kind == Collective::kPsum || c.spec.kind == Collective::kPsumScatter;
  const int group = SummedDevices(mesh, spec);
  double atol = sums ? kernels::ReductionTolerance(c.dtype, group) : 0;
  double rtol = 0;
  if (spec.mean) {
    atol = atol / group + kernels::ReductionTolerance(expected[0].dtype(), 1);
    rtol = 1e-6;  // an integer mean: an exact sum, then one f32 scaling
  }
  for (int d = 0; d < mesh.devices(); ++d) {
    const auto check = dsl::CompareClose(run.result.device_outputs[0][d], expected[d], rtol, atol);
    EXPECT_TRUE(check.equal) << "device " << d << ": " << check.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Every, LaxAlgorithm, ::testing::ValuesIn(AlgorithmCases()),
                         [](const auto& info) {
                           return info.param.c.name + "_" +
                                  kernels::lax::AlgorithmName(info.param.algorithm);
                         });

// Several axes, or a box of replica groups, run one stage per torus axis (XLA's
// multi-dimensional decomposition); a group that is no box runs as one ring.
TEST(LaxPlan, DecomposesSeveralAxesAndBoxesButNotScatteredGroups) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x4"));
  const dsl::ShapeDtype x{{1024}, DType::kF32};
  auto stages = [&](const CollectiveSpec& s) {
    return kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, s, x), x).stages.size();
  };
  EXPECT_EQ(stages(LaxSpec(Collective::kPsum, {"x", "y"})), 2u);
  EXPECT_EQ(stages(Groups(Collective::kPsum, {{7, 2, 5, 0, 3, 6, 1, 4}})), 2u);
  EXPECT_EQ(stages(Groups(Collective::kAllGather, {{0, 1, 2, 3, 4, 5, 6, 7}}, 0, true)), 2u);
  EXPECT_EQ(stages(Groups(Collective::kPsum, {{0, 5, 2, 7}, {1, 4, 3, 6}})), 1u);
  EXPECT_EQ(stages(Groups(Collective::kPsumScatter, {{0, 1, 2, 3, 4, 5, 6, 7}}, 0, true)), 1u);
}

// The estimate charges the latencies the simulation charges (kernels/lax/cost_model.h): each
// term, set alone on a topology that otherwise has none, moves the estimate's latency part and
// the simulated time by the same amount. Timing-only runs.
struct Timed {
  double estimate_latency_s;
  double simulated_s;
};

Timed TimeOf(const config::Topology& topology, CollectiveSpec spec, Algorithm algorithm,
             const dsl::Shape& shape) {
  const dsl::Mesh mesh(topology);
  spec.algorithm = algorithm;
  const dsl::ShapeDtype x{shape, DType::kBF16};
  const auto plan = kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, spec, x), x);
  const testing::LaxRun run = testing::RunLax(mesh, spec, shape, DType::kBF16, false);
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return {plan.cost.latency_s, static_cast<double>(run.result.time()) * 1e-12};
}

// A ring all-gather round a closed ring of 8: a barrier and 7 steps, each a remote signal and
// (the steps) a DMA, in one launch. The simulation also issues the own shard's copy into place
// before the steps, a DMA the estimate leaves out with the other HBM copies.
TEST(LaxCostModel, ChargesTheSignalIssueAndLaunchLatenciesTheModelCharges) {
  const CollectiveSpec spec = LaxSpec(Collective::kAllGather, {"x"}, 0, true);
  const dsl::Shape shard = {512};  // bf16: 1 KiB per device
  const auto with = [&](const std::function<void(config::Topology&)>& tweak) {
    return TimeOf(testing::MakeTopology({8}, {true}, tweak), spec, Algorithm::kRing, shard);
  };
  const Timed none = with(nullptr);
  struct Term {
    const char* name;
    std::function<void(config::Topology&)> tweak;
    double estimated_s;  // what the term adds to the estimate's latency part
    double simulated_s;  // and to the simulated time
  };
  const Term terms[] = {
      {"ici.signal_latency_ns 2000 (8 signals)",
       [](config::Topology& t) { t.mutable_ici()->set_signal_latency_ns(2000); }, 8 * 2e-6,
       8 * 2e-6},
      {"chip.dma.issue_latency_ns 500 (7 steps; and the copy, simulated)",
       [](config::Topology& t) { t.mutable_chip()->mutable_dma()->set_issue_latency_ns(500); },
       7 * 0.5e-6, 8 * 0.5e-6},
      {"chip.cost.op_launch_ns 1700 (one launch)",
       [](config::Topology& t) { t.mutable_chip()->mutable_cost()->set_op_launch_ns(1700); },
       1.7e-6, 1.7e-6},
  };
  for (const Term& term : terms) {
    const Timed t = with(term.tweak);
    EXPECT_NEAR(t.estimate_latency_s - none.estimate_latency_s, term.estimated_s, 1e-12)
        << term.name;
    EXPECT_NEAR(t.simulated_s - none.simulated_s, term.simulated_s, 0.01 * term.simulated_s)
        << term.name;
  }
}

// Store-and-forward routers hold a chunk whole at each router after the first link: a 7-hop
// ppermute along a line of 8 of one 256 KiB chunk pays 6 more chunk times on a link.
TEST(LaxCostModel, ChargesStoreAndForwardPerHopAfterTheFirst) {
  CollectiveSpec spec = LaxSpec(Collective::kPpermute, {"x"});
  spec.perm = {{0, 7}};
  const dsl::Shape shard = {128 << 10};  // bf16: 256 KiB, under one 512 KiB chunk
  const auto with = [&](config::IciConfig::Forwarding forwarding) {
    return TimeOf(testing::MakeTopology(
                      {8}, {false},
                      [&](config::Topology& t) { t.mutable_ici()->set_forwarding(forwarding); }),
                  spec, Algorithm::kDirect, shard);
  };
  const Timed cut = with(config::IciConfig::CUT_THROUGH);
  const Timed stored = with(config::IciConfig::STORE_AND_FORWARD);
  const double added =
      6 * (256 << 10) / testing::MakeTopology({8}, {false}).ici().link_bandwidth_bytes_per_s();
  EXPECT_NEAR(stored.estimate_latency_s - cut.estimate_latency_s, added, 1e-12);
  EXPECT_NEAR(stored.simulated_s - cut.simulated_s, added, 0.01 * added);
}

TEST(LaxPlan, RefusesAnAlgorithmTheCollectiveDoesNotImplement) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x4"));
  const dsl::ShapeDtype x{{8, 8}, DType::kF32};
  CollectiveSpec spec = LaxSpec(Collective::kAllToAll, {"y"}, 0, true, 1);
  spec.algorithm = Algorithm::kRing;
  try {
    kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, spec, x), x);
    FAIL() << "all_to_all ran a ring";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "all_to_all y: it does not implement the ring algorithm; it runs direct. Choose "
              "one of those.");
  }
}

TEST(LaxPlan, RefusesRecursiveDoublingOnAGroupThatIsNotAPowerOfTwo) {
  const dsl::Mesh mesh(testing::LaxTopology("ring5"));
  const dsl::ShapeDtype x{{10}, DType::kF32};
  CollectiveSpec spec = LaxSpec(Collective::kPsum, {"x"});
  spec.algorithm = Algorithm::kRecursiveDoubling;
  try {
    kernels::lax::PlanCollective(mesh, kernels::lax::Checked(mesh, spec, x), x);
    FAIL() << "recursive doubling ran on 5 devices";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "psum x: recursive_doubling needs a power-of-two number of devices per group, and x "
              "has 5. Choose ring, bidi_ring or direct for it.");
  }
}

}  // namespace
}  // namespace tpusim
