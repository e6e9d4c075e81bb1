// Layer 4 for the lax collectives: every mistake OutputType (and so MakeCall) rejects ends
// in Error(kInvalidArgument) whose message names the op, the argument and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "kernels/lax/collectives.h"
#include "tests/lax/lax_support.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using dsl::DType;
using kernels::lax::Collective;
using kernels::lax::CollectiveSpec;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of the error OutputType throws for `spec` on a 4x2 mesh ('x': 4, 'y': 2),
// after checking that MakeCall throws the same.
std::string ErrorOf(const CollectiveSpec& spec, dsl::Shape shape, DType dtype = DType::kF32) {
  const dsl::Mesh mesh(testing::MakeTopology({4, 2}, {false, false}));
  const dsl::ShapeDtype x{std::move(shape), dtype};
  try {
    kernels::lax::MakeCall(mesh, spec, x);
    ADD_FAILURE() << "MakeCall accepted " << kernels::lax::Describe(spec);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
  try {
    kernels::lax::OutputType(mesh, spec, x);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "OutputType accepted " << kernels::lax::Describe(spec);
  return "";
}

using testing::LaxSpec;

TEST(LaxErrors, AnAxisNameNotInTheMeshNamesTheMeshAxes) {
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllGather, {"z"}), {8}),
              AllOf(HasSubstr("all_gather z: axis name 'z' is not in Mesh("),
                    HasSubstr("use one of 'x', 'y'")));
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kPsum, {"x", "model"}), {8}),
              HasSubstr("psum (x, model): axis name 'model' is not in"));
}

TEST(LaxErrors, NoAxisOrARepeatedAxisIsRejected) {
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kPsum, {}), {8}),
              HasSubstr("no axis_name given. Name a mesh axis"));
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kPsum, {"x", "x"}), {8}),
              HasSubstr("axis name 'x' is given twice; name each axis once."));
}

TEST(LaxErrors, OnlyPsumTakesSeveralAxes) {
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllGather, {"x", "y"}), {8}),
              HasSubstr("all_gather takes one axis name here; only psum reduces over several"));
}

TEST(LaxErrors, AReductionOfInt8SaysToWidenFirst) {
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kPsum, {"x"}), {8}, DType::kInt8),
              HasSubstr("int8 partial sums would overflow; reduce in int32, bf16 or f32"));
}

TEST(LaxErrors, ADimensionIndexOutOfRangeGivesTheRange) {
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllGather, {"x"}, 3), {8, 8}),
              HasSubstr("axis=3 is out of range for x of type f32[8,8]: it must be in [-3, 3)"));
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllGather, {"x"}, 2, true), {8, 8}),
              HasSubstr("axis=2 is out of range for x of type f32[8,8]: it must be in [-2, 2)"));
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllToAll, {"x"}, 0, true, -3), {8, 8}),
              HasSubstr("concat_axis=-3 is out of range"));
}

TEST(LaxErrors, ATiledDimensionThatDoesNotDivideSuggestsSizesThatDo) {
  EXPECT_THAT(
      ErrorOf(LaxSpec(Collective::kPsumScatter, {"x"}, 1, true), {2, 10}),
      AllOf(HasSubstr("psum_scatter x: scatter_dimension=1 has size 10, which does not divide "
                      "into 4 equal tiles over 'x'"),
            HasSubstr("multiple of 4 (e.g. 8 or 12), or pad x")));
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllToAll, {"y"}, 0, true, 1), {3, 4}),
              HasSubstr("split_axis=0 has size 3, which does not divide into 2 equal tiles"));
}

TEST(LaxErrors, AnUntiledDimensionMustEqualTheAxisSize) {
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kPsumScatter, {"x"}, 0), {8, 3}),
              AllOf(HasSubstr("scatter_dimension=0 has size 8, but without tiled=True it must "
                              "equal the size of 'x' (4)"),
                    HasSubstr("Pass tiled=True")));
  EXPECT_THAT(ErrorOf(LaxSpec(Collective::kAllToAll, {"x"}, 1, false, 0), {4, 2}),
              HasSubstr("split_axis=1 has size 2, but without tiled=True"));
}

TEST(LaxErrors, APermutationThatIsNotOneSaysWhichIndexRepeats) {
  CollectiveSpec s{Collective::kPpermute, {"x"}};
  s.perm = {{0, 1}, {0, 2}};
  EXPECT_THAT(ErrorOf(s, {8}), HasSubstr("ppermute x: perm is not a permutation: source 0 "
                                         "appears twice. Give each device at most one "
                                         "destination."));
  s.perm = {{0, 1}, {2, 1}};
  EXPECT_THAT(ErrorOf(s, {8}), HasSubstr("destination 1 appears twice"));
  s.perm = {{0, 4}};
  EXPECT_THAT(ErrorOf(s, {8}),
              HasSubstr("the pair (0, 4) names index 4, outside axis 'x' (indices 0 to 3)"));
}

}  // namespace
}  // namespace tpusim
