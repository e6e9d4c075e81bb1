// Misuse of programs (dsl/program/context.h): each mistake ends the run with a message
// that names the op and the fix, and a trace valid up to the failure.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// Runs `body` on a 4-chip ring with x f32[4, 8] on every device; expects it to fail.
std::string Failure(const ProgramBody& body, int outputs = 1,
                    const std::function<void(config::Topology&)>& tweak = {}) {
  const Mesh mesh(testing::MakeTopology({4}, {true}, tweak));
  std::vector<PartitionSpec> out_specs(outputs, P{});
  auto program = shard_map(mesh, {P{}}, out_specs, body);
  auto run =
      testing::RunAndCheckTrace(program, {Array::Random({4, 8}, DType::kF32, 1)}, {}, "failure");
  EXPECT_FALSE(run.result.ok);
  return run.result.error;
}

TEST(ProgramErrors, DotShapesThatDoNotMatch) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.dot(in[0], in[0])};
  });
  EXPECT_THAT(e, HasSubstr("dot: needs a [M, K] and b [K, N], but got f32[4,8] and f32[4,8]"));
}

TEST(ProgramErrors, AddShapesThatDoNotMatch) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.add(in[0], ctx.zeros({8, 4}, DType::kF32))};
  });
  EXPECT_THAT(e, HasSubstr("add: the operands are f32[4,8] and f32[8,4]"));
  EXPECT_THAT(e, HasSubstr("no broadcasting"));
}

TEST(ProgramErrors, ConcatenateShapesThatDoNotMatch) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.concatenate({in[0], ctx.zeros({3, 3}, DType::kF32)}, 0)};
  });
  EXPECT_THAT(e, HasSubstr("concatenate: operand 1 is f32[3,3] but operand 0 is f32[4,8]"));
}

TEST(ProgramErrors, ACollectiveAlgorithmThatDoesNotExistListsTheNames) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return ctx.Call("psum", {in[0]}, {{"axis_name", "x"}, {"algorithm", "tree"}});
  });
  EXPECT_THAT(e, HasSubstr("psum x: there is no collective algorithm 'tree'; use one of "
                           "bidi_ring, ring, direct, recursive_doubling."));
}

TEST(ProgramErrors, ACollectiveAlgorithmTheOpDoesNotImplementListsTheOnesItDoes) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return ctx.Call("psum_scatter", {in[0]},
                    {{"axis_name", "x"}, {"algorithm", "recursive_doubling"}});
  });
  EXPECT_THAT(e, HasSubstr("psum_scatter x: it does not implement the recursive_doubling "
                           "algorithm; it runs bidi_ring, ring, direct. Choose one of those."));
}

// The run-wide algorithm on a program with a collective that does not implement it: that one
// keeps its own, and the run goes on.
TEST(ProgramCollectives, TheRunsAlgorithmAppliesWhereItIsImplemented) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  auto program =
      // all_to_all leaves each device its own blocks: its output differs along x.
      shard_map(mesh, {P{}}, {P{}, P{"x"}}, [](ProgramContext& ctx, const std::vector<Value>& in) {
        Value summed = ctx.psum(in[0], "x");
        Value swapped = ctx.all_to_all(in[0], "x", 0, 0, true);
        Value chosen =
            ctx.Call("psum", {in[0]}, {{"axis_name", "x"}, {"algorithm", "direct"}}).at(0);
        return std::vector<Value>{ctx.add(summed, chosen), swapped};
      });
  RunOptions options;
  options.collective_algorithm = "ring";
  const auto run = testing::RunAndCheckTrace(program, {Array::Random({4, 8}, DType::kF32, 1)},
                                             options, "run algorithm");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  ASSERT_EQ(run.result.collectives.size(), 3u);
  EXPECT_EQ(run.result.collectives[0].algorithm, "ring");
  EXPECT_TRUE(run.result.collectives[0].forced);
  EXPECT_EQ(run.result.collectives[1].algorithm, "direct");  // all_to_all has no ring
  EXPECT_FALSE(run.result.collectives[1].forced);
  EXPECT_EQ(run.result.collectives[2].algorithm, "direct");  // the op's own wins
  EXPECT_TRUE(run.result.collectives[2].forced);
}

TEST(ProgramErrors, AxisNameNotInTheMesh) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.all_gather(in[0], "z")};
  });
  EXPECT_THAT(e, HasSubstr("'z'"));
  // The op and its axis, the mesh, and the axes it does have.
  EXPECT_THAT(e, HasSubstr("all_gather z: axis name 'z' is not in Mesh('x': 4); use one of 'x'."));
}

// The divisibility rules of the lax collectives, as JAX checks them. Every one that can
// fail has a test here (and lax_errors_test.cc checks them on a 2-D mesh):
//   psum_scatter  tiled: x.shape[scatter_dimension] must divide by the axis size;
//                 untiled: it must equal the axis size (the dimension is removed);
//   all_to_all    tiled: x.shape[split_axis] must divide by the axis size;
//                 untiled: it must equal the axis size.
// all_gather has no such rule, tiled or not: it only concatenates (tiled) or stacks
// (untiled) the devices' blocks, so every shape gathers. A "tiled all-gather whose
// dimension does not divide" cannot happen; its inverse, the tiled psum_scatter, is the
// one that splits a dimension and can fail.
TEST(ProgramErrors, TiledScatterWhoseDimensionDoesNotDivide) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>&) {
    return std::vector<Value>{ctx.psum_scatter(ctx.zeros({5, 8}, DType::kF32), "x", 0, true)};
  });
  EXPECT_THAT(e, HasSubstr("psum_scatter"));
  EXPECT_THAT(e, HasSubstr("5"));
  EXPECT_THAT(e, HasSubstr("psum_scatter x: scatter_dimension=0 has size 5, which does not "
                           "divide into 4 equal tiles over 'x' (4 devices). Use a size that is "
                           "a multiple of 4 (e.g. 4 or 8), or pad x."));
}

TEST(ProgramErrors, UntiledScatterDimensionThatIsNotTheAxisSize) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.psum_scatter(in[0], "x", /*scatter_dimension=*/1)};
  });
  EXPECT_THAT(e, HasSubstr("psum_scatter x: scatter_dimension=1 has size 8, but without "
                           "tiled=True it must equal the size of 'x' (4). Pass tiled=True to "
                           "split it into 4 tiles instead."));
}

TEST(ProgramErrors, TiledAllToAllWhoseSplitAxisDoesNotDivide) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>&) {
    return std::vector<Value>{ctx.all_to_all(ctx.zeros({6, 8}, DType::kF32), "x", 0, 1, true)};
  });
  EXPECT_THAT(e, HasSubstr("all_to_all x: split_axis=0 has size 6, which does not divide into 4 "
                           "equal tiles over 'x' (4 devices). Use a size that is a multiple of 4 "
                           "(e.g. 4 or 8), or pad x."));
}

TEST(ProgramErrors, UntiledAllToAllWhoseSplitAxisIsNotTheAxisSize) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.all_to_all(in[0], "x", /*split_axis=*/1, /*concat_axis=*/0)};
  });
  EXPECT_THAT(e, HasSubstr("all_to_all x: split_axis=1 has size 8, but without tiled=True it "
                           "must equal the size of 'x' (4). Pass tiled=True to split it into 4 "
                           "tiles instead."));
}

// The counter-case: a tiled all_gather of any size runs (5 rows per device, 20 gathered).
TEST(ProgramErrors, ATiledAllGatherOfAnySizeIsNoError) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  auto program = shard_map(mesh, {P{"x", nullptr}}, {P{}},
                           [](ProgramContext& ctx, const std::vector<Value>& in) {
                             return std::vector<Value>{ctx.all_gather(in[0], "x", 0, true)};
                           });
  const Array x = Array::Random({20, 3}, DType::kF32, 2);
  auto run = testing::RunAndCheckTrace(program, {x}, {}, "gather_any_size");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(CompareExact(run.result.outputs[0], x).equal);
}

TEST(ProgramErrors, PermutationThatIsNotOne) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.ppermute(in[0], "x", {{0, 1}, {2, 1}})};
  });
  EXPECT_THAT(e, HasSubstr("ppermute"));
}

TEST(ProgramErrors, OutSpecsThatDisagreeWithTheBody) {
  const std::string e = Failure(
      [](ProgramContext& ctx, const std::vector<Value>& in) {
        return std::vector<Value>{in[0], ctx.relu(in[0])};
      },
      1);
  EXPECT_THAT(e, HasSubstr("the shard_map body returns 2 values (f32[4,8], f32[4,8]) but "
                           "out_specs has 1 (P())"));
}

TEST(ProgramErrors, HbmOverflowListsTheAllocations) {
  const std::string e = Failure(
      [](ProgramContext& ctx, const std::vector<Value>&) {
        return std::vector<Value>{ctx.zeros({1024}, DType::kF32)};
      },
      1, [](config::Topology& t) { t.mutable_chip()->mutable_hbm()->set_capacity_bytes(4096); });
  EXPECT_THAT(e, HasSubstr("HBM of chip 0 (x=0) is over capacity"));
  EXPECT_THAT(e, HasSubstr("in0 f32[4,8]"));
  EXPECT_THAT(e, HasSubstr("zeros result 0 f32[1024]  <- does not fit"));
}

TEST(ProgramErrors, DevicesThatRunDifferentOps) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.axis_index("x") == 2 ? ctx.relu(in[0]) : ctx.add(in[0], in[0])};
  });
  EXPECT_THAT(e, HasSubstr("SPMD divergence"));
  EXPECT_THAT(e, HasSubstr("'relu'"));
  EXPECT_THAT(e, HasSubstr("'add'"));
}

TEST(ProgramErrors, UnknownOpName) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return ctx.Call("all_gahter", {in[0]});
  });
  EXPECT_THAT(e, HasSubstr("unknown program op 'all_gahter'; the known ops are:"));
  EXPECT_THAT(e, HasSubstr("all_gather"));
}

TEST(ProgramErrors, UnknownOrMistypedAttribute) {
  std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return ctx.Call("all_gather", {in[0]}, {{"axis_name", "x"}, {"tiles", true}});
  });
  EXPECT_THAT(e, HasSubstr("all_gather: unknown attribute 'tiles'; all_gather takes:"));
  e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    return ctx.Call("all_gather", {in[0]}, {{"axis_name", "x"}, {"tiled", 3}});
  });
  EXPECT_THAT(e, HasSubstr("all_gather: the attribute 'tiled' must be a bool"));
}

TEST(ProgramErrors, AsyncCollectiveNeverWaitedFor) {
  const std::string e = Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
    ctx.all_gather_start(in[0], "x");
    return std::vector<Value>{in[0]};
  });
  EXPECT_THAT(e, HasSubstr("started 'all_gather x' asynchronously and never waited for it"));
}

}  // namespace
}  // namespace tpusim
