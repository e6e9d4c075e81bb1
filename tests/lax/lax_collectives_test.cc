// Every lax collective matches its host reference on every device: 1-, 2- and 3-D meshes
// (test-local rings of 5 and 2, a ring of 5 with little VMEM, a 3x2 and a 2x3x2, presets v5e-2x4
// and v4-4x4x4), odd and even axis sizes, tiled and untiled, several ranks, dims and dtypes.
//
// Data movement (all_gather, ppermute, all_to_all) must be exact. Sums are compared with
// atol = u G (G + 1) for G devices summed (kernels/reduce_scatter.h ReductionTolerance):
// the ring rounds each partial sum to the dtype once per step, the reference once, and
// the inputs are in [-1, 1). int32 sums are exact.

#include <gtest/gtest.h>

#include "kernels/lax/calls.h"
#include "kernels/reduce_scatter.h"
#include "tests/lax/lax_support.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using dsl::DType;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;
using Case = testing::LaxCase;

class LaxCollective : public ::testing::TestWithParam<Case> {};

TEST_P(LaxCollective, MatchesTheHostReferenceOnEveryDevice) {
  const Case& c = GetParam();
  const dsl::Mesh mesh(testing::LaxTopology(c.topology));
  testing::LaxRun run = testing::RunLax(mesh, c.spec, c.shape, c.dtype);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const std::vector<dsl::Array> expected = kernels::lax::Reference(mesh, c.spec, run.shards);
  const bool sums = c.spec.kind == Collective::kPsum || c.spec.kind == Collective::kPsumScatter;
  const int group = c.spec.groups.empty()
                        ? kernels::lax::DeviceGroups::OfAxes(mesh, c.spec.axes).group_size()
                        : static_cast<int>(c.spec.groups[0].size());
  const double atol = sums ? kernels::ReductionTolerance(c.dtype, group) : 0;
  ASSERT_EQ(run.result.device_outputs.size(), 1u);
  for (int d = 0; d < mesh.devices(); ++d) {
    const auto check =
        dsl::CompareClose(run.result.device_outputs[0][d], expected[d], /*rtol=*/0, atol);
    EXPECT_TRUE(check.equal) << "device " << d << ": " << check.detail;
  }
  EXPECT_GT(run.result.time(), 0u);
}

using testing::LaxSpec;

CollectiveSpec Perm(std::string axis, std::vector<std::pair<int, int>> perm) {
  CollectiveSpec s{Collective::kPpermute, {std::move(axis)}};
  s.perm = std::move(perm);
  return s;
}

std::vector<Case> AllGatherCases() {
  const auto ag = Collective::kAllGather;
  return {
      {"all_gather_ring5_untiled_axis0_bf16", "ring5", LaxSpec(ag, {"x"}, 0), {4, 8}, DType::kBF16},
      {"all_gather_ring5_tiled_axis1_f32",
       "ring5",
       LaxSpec(ag, {"x"}, 1, true),
       {3, 5},
       DType::kF32},
      {"all_gather_ring5_untiled_last_int32",
       "ring5",
       LaxSpec(ag, {"x"}, 2),
       {2, 3},
       DType::kInt32},
      {"all_gather_ring2_tiled_1d_int32", "ring2", LaxSpec(ag, {"x"}, 0, true), {7}, DType::kInt32},
      {"all_gather_mesh3x2_x_tiled_rank3",
       "mesh3x2",
       LaxSpec(ag, {"x"}, 1, true),
       {2, 3, 4},
       DType::kInt32},
      {"all_gather_mesh3x2_y_untiled_negative",
       "mesh3x2",
       LaxSpec(ag, {"y"}, -1),
       {3, 2},
       DType::kBF16},
      {"all_gather_mesh2x3x2_y_untiled_axis1",
       "mesh2x3x2",
       LaxSpec(ag, {"y"}, 1),
       {2, 5},
       DType::kF32},
      {"all_gather_v5e_2x4_y_tiled_axis0",
       "v5e-2x4",
       LaxSpec(ag, {"y"}, 0, true),
       {16, 128},
       DType::kBF16},
      {"all_gather_v4_4x4x4_z_untiled", "v4-4x4x4", LaxSpec(ag, {"z"}, 0), {8, 16}, DType::kF32},
  };
}

std::vector<Case> ReductionCases() {
  const auto ps = Collective::kPsum;
  const auto rs = Collective::kPsumScatter;
  return {
      {"psum_ring5_f32_even_blocks", "ring5", LaxSpec(ps, {"x"}), {5, 16}, DType::kF32},
      {"psum_ring5_bf16_remainder", "ring5", LaxSpec(ps, {"x"}), {3, 7}, DType::kBF16},
      {"psum_ring5_int32_fewer_than_x", "ring5", LaxSpec(ps, {"x"}), {3}, DType::kInt32},
      {"psum_ring2_int32", "ring2", LaxSpec(ps, {"x"}), {4, 6}, DType::kInt32},
      {"psum_mesh3x2_both_axes_f32", "mesh3x2", LaxSpec(ps, {"x", "y"}), {6, 5}, DType::kF32},
      {"psum_mesh3x2_y_bf16", "mesh3x2", LaxSpec(ps, {"y"}), {8, 9}, DType::kBF16},
      {"psum_mesh2x3x2_x_z_int32", "mesh2x3x2", LaxSpec(ps, {"z", "x"}), {7, 3}, DType::kInt32},
      {"psum_v5e_2x4_all_axes_bf16", "v5e-2x4", LaxSpec(ps, {"x", "y"}), {8, 128}, DType::kBF16},
      {"psum_scatter_ring5_tiled_middle_f32",
       "ring5",
       LaxSpec(rs, {"x"}, 1, true),
       {3, 10, 4},
       DType::kF32},
      {"psum_scatter_ring5_untiled_dim0_int32",
       "ring5",
       LaxSpec(rs, {"x"}, 0),
       {5, 6},
       DType::kInt32},
      {"psum_scatter_ring5_untiled_to_scalar", "ring5", LaxSpec(rs, {"x"}, 0), {5}, DType::kF32},
      {"psum_scatter_mesh3x2_x_tiled_last_bf16",
       "mesh3x2",
       LaxSpec(rs, {"x"}, -1, true),
       {4, 6},
       DType::kBF16},
      {"psum_scatter_mesh2x3x2_y_untiled_last",
       "mesh2x3x2",
       LaxSpec(rs, {"y"}, 1),
       {5, 3},
       DType::kInt32},
      {"psum_scatter_v5e_2x4_y_tiled_dim0",
       "v5e-2x4",
       LaxSpec(rs, {"y"}, 0, true),
       {32, 128},
       DType::kF32},
      {"psum_v4_4x4x4_three_axes_f32",
       "v4-4x4x4",
       LaxSpec(ps, {"x", "y", "z"}),
       {4, 9},
       DType::kF32},
      {"psum_scatter_v4_4x4x4_y_tiled",
       "v4-4x4x4",
       LaxSpec(rs, {"y"}, 1, true),
       {2, 8},
       DType::kBF16},
      {"psum_scatter_chunks_of_one_row",
       "ring5_small_vmem",
       LaxSpec(rs, {"x"}, 1, true),
       {8, 10, 1000},
       DType::kF32},
      {"psum_scatter_chunks_of_row_pieces",
       "ring5_small_vmem",
       LaxSpec(rs, {"x"}, 1),
       {3, 5, 4000},
       DType::kF32},
      {"psum_scatter_chunks_of_many_rows",
       "ring5_small_vmem",
       LaxSpec(rs, {"x"}, 1),
       {40, 5, 100},
       DType::kF32},
      {"psum_many_chunks_and_remainder",
       "ring5_small_vmem",
       LaxSpec(ps, {"x"}),
       {64, 1001},
       DType::kF32},
  };
}

std::vector<Case> PermutationCases() {
  const auto a2a = Collective::kAllToAll;
  return {
      {"ppermute_ring5_shift_by_2_bf16",
       "ring5",
       Perm("x", {{0, 2}, {1, 3}, {2, 4}, {3, 0}, {4, 1}}),
       {4, 8},
       DType::kBF16},
      {"ppermute_ring5_partial_gets_zeros",
       "ring5",
       Perm("x", {{0, 3}, {3, 1}, {2, 2}}),
       {3, 5},
       DType::kInt32},
      {"ppermute_mesh3x2_x_swap", "mesh3x2", Perm("x", {{0, 2}, {2, 0}}), {2, 3, 4}, DType::kF32},
      {"ppermute_v5e_2x4_y_reverse",
       "v5e-2x4",
       Perm("y", {{0, 3}, {1, 2}, {2, 1}, {3, 0}}),
       {8, 128},
       DType::kBF16},
      {"all_to_all_ring5_tiled_0_to_1",
       "ring5",
       LaxSpec(a2a, {"x"}, 0, true, 1),
       {10, 3},
       DType::kInt32},
      {"all_to_all_ring5_untiled_1_to_0",
       "ring5",
       LaxSpec(a2a, {"x"}, 1, false, 0),
       {3, 5},
       DType::kInt32},
      {"all_to_all_ring2_tiled_same_axis",
       "ring2",
       LaxSpec(a2a, {"x"}, 0, true, 0),
       {4, 4},
       DType::kF32},
      {"all_to_all_mesh3x2_x_untiled_rank3",
       "mesh3x2",
       LaxSpec(a2a, {"x"}, 0, false, 2),
       {3, 2, 4},
       DType::kInt32},
      {"all_to_all_mesh2x3x2_y_tiled_2_to_0",
       "mesh2x3x2",
       LaxSpec(a2a, {"y"}, 2, true, 0),
       {2, 2, 6},
       DType::kBF16},
      {"all_to_all_v5e_2x4_y_tiled",
       "v5e-2x4",
       LaxSpec(a2a, {"y"}, 1, true, 0),
       {8, 128},
       DType::kInt32},
      {"all_to_all_v4_4x4x4_z_untiled",
       "v4-4x4x4",
       LaxSpec(a2a, {"z"}, 0, false, 1),
       {4, 3},
       DType::kInt32},
      {"ppermute_v4_4x4x4_x_cycle",
       "v4-4x4x4",
       Perm("x", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}),
       {2, 8},
       DType::kF32},
  };
}

INSTANTIATE_TEST_SUITE_P(AllGather, LaxCollective, ::testing::ValuesIn(AllGatherCases()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Reductions, LaxCollective, ::testing::ValuesIn(ReductionCases()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Permutations, LaxCollective, ::testing::ValuesIn(PermutationCases()),
                         [](const auto& info) { return info.param.name; });

TEST(LaxCollective, IsNamedAfterTheOpAndItsAxes) {
  EXPECT_EQ(kernels::lax::Describe(LaxSpec(Collective::kAllGather, {"x"})), "all_gather x");
  EXPECT_EQ(kernels::lax::Describe(LaxSpec(Collective::kPsum, {"x", "y"})), "psum (x, y)");
  const dsl::Mesh mesh(testing::LaxTopology("ring5"));
  EXPECT_EQ(
      kernels::lax::MakeCall(mesh, LaxSpec(Collective::kPsum, {"x"}), {{4}, DType::kF32}).name,
      "psum x");
}

TEST(LaxCollective, OutputTypesFollowJax) {
  const dsl::Mesh mesh(testing::LaxTopology("ring5"));
  auto out = [&](const CollectiveSpec& s, dsl::Shape shape) {
    return kernels::lax::OutputType(mesh, s, {std::move(shape), DType::kBF16}).shape;
  };
  using dsl::Shape;
  EXPECT_EQ(out(LaxSpec(Collective::kAllGather, {"x"}, 1), {2, 3}), (Shape{2, 5, 3}));
  EXPECT_EQ(out(LaxSpec(Collective::kAllGather, {"x"}, 1, true), {2, 3}), (Shape{2, 15}));
  EXPECT_EQ(out(LaxSpec(Collective::kPsumScatter, {"x"}, 1, true), {2, 10}), (Shape{2, 2}));
  EXPECT_EQ(out(LaxSpec(Collective::kPsumScatter, {"x"}, 0), {5, 3}), (Shape{3}));
  EXPECT_EQ(out(LaxSpec(Collective::kAllToAll, {"x"}, 0, true, 1), {10, 3}), (Shape{2, 15}));
  // np.insert(np.delete(x.shape, split_axis), concat_axis, X)
  EXPECT_EQ(out(LaxSpec(Collective::kAllToAll, {"x"}, 0, false, 1), {5, 3, 2}), (Shape{3, 5, 2}));
}

// The small-VMEM cases above really cut blocks three ways: 256 KiB / 2 / (2 directions x 6
// slot rows x 2 chunks in flight) = 5461 bytes per chunk, 1365 f32 elements.
TEST(RingReducePlan, CutsStridedBlocksIntoRowsRowPiecesOrGroupsOfRows) {
  const dsl::Mesh mesh(testing::LaxTopology("ring5_small_vmem"));
  const kernels::RingChunking chunking;  // sized from VMEM, 2 chunks in flight
  const auto one_row = kernels::PlanRingReduce(mesh, DType::kF32, chunking, 2000, 0, 1000, 2, 8);
  EXPECT_EQ(one_row.rows_per_chunk, 1);
  EXPECT_EQ(one_row.col_pieces, 1);
  EXPECT_EQ(one_row.chunks, 8);
  const auto pieces = kernels::PlanRingReduce(mesh, DType::kF32, chunking, 4000, 0, 2000, 2, 3);
  EXPECT_EQ(pieces.rows_per_chunk, 1);
  EXPECT_EQ(pieces.col_pieces, 2);
  EXPECT_EQ(pieces.chunks, 6);
  const auto groups = kernels::PlanRingReduce(mesh, DType::kF32, chunking, 100, 50, 50, 2, 40);
  EXPECT_EQ(groups.rows_per_chunk, 27);
  EXPECT_EQ(groups.chunks, 2);
  EXPECT_EQ(groups.slot, 27 * 50);
}

}  // namespace
}  // namespace tpusim
