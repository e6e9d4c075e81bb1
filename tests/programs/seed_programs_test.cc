// The example programs of programs/ (registry entries): each matches its host reference,
// the ar_vs_ag crossover falls where the bytes-vs-FLOPs argument puts it, and the mlp
// layouts differ in time, ICI bytes and peak HBM as their shardings say.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "dsl/program/context.h"
#include "kernels/registry.h"
#include "programs/ar_vs_ag.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using testing::Entry;
using testing::ParamsFor;

// Runs the entry's workload functionally (with a checked trace) and compares it with the
// workload's own host reference and tolerance.
dsl::RunResult RunAndCompare(const std::string& name, const dsl::Mesh& mesh,
                             const kernels::ParamValues& args = {}) {
  kernels::Workload w = Entry(name).make(mesh, ParamsFor(name, args));
  EXPECT_FALSE(w.program.is_kernel()) << name << " should be a program";
  EXPECT_EQ(w.expected.size(), 1u);
  EXPECT_GT(w.atol, 0) << name << ": a tolerance of 0 would not survive bf16 rounding";
  testing::CheckedRun run = testing::RunWorkload(w, true, name.substr(name.find('/') + 1));
  EXPECT_TRUE(run.result.ok) << name << ": " << run.result.error;
  if (!run.result.ok) return run.result;
  const dsl::Comparison c =
      dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(c.equal) << name << " (atol " << w.atol << "): " << c.detail;
  return run.result;
}

class Seed003 : public ::testing::TestWithParam<const char*> {};

// At the sizes: inputs bf16[2048, 2048] P('x', 'y'), weights bf16[2048, 1024]
// P('x', None) on v5e 2x2.
TEST_P(Seed003, MatchesTheHostReferenceOnV5e2x2) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  const std::string name = std::string("seed003/") + GetParam();
  const dsl::RunResult r = RunAndCompare(name, mesh);
  std::printf("%s: %.1f us\n", name.c_str(), static_cast<double>(r.time()) * 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Versions, Seed003, ::testing::Values("a", "b", "c", "d", "e", "f"));

// A wrong answer must fail the comparison: the tolerance is far below the values.
TEST(Seed003Reference, RejectsAResultMissingOnePartialSum) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  kernels::Workload w =
      Entry("seed003/b").make(mesh, ParamsFor("seed003/b", {{"m", 256}, {"k", 512}, {"n", 256}}));
  testing::CheckedRun run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  ASSERT_TRUE(dsl::CheckAgainstReference(w.program, run.result, w.expected, w.rtol, w.atol).equal);
  // The product of the first K-chunk alone, as a psum that skipped y = 1 would give.
  const dsl::Array& a = w.inputs[0];
  const dsl::Array& b = w.inputs[1];
  dsl::Array wrong({256, 256}, dsl::DType::kBF16);
  for (int64_t i = 0; i < 256; ++i) {
    for (int64_t j = 0; j < 256; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < 256; ++p)
        acc += a.GetFlat(i * 512 + p) * b.GetFlat(p * 256 + j);
      wrong.SetFlat(i * 256 + j, acc);
    }
  }
  EXPECT_FALSE(dsl::CompareClose(wrong, w.expected[0], w.rtol, w.atol).equal);
}

TEST(Seed003Errors, NamesTheSizeThatDoesNotSplit) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  try {
    Entry("seed003/d").make(mesh, ParamsFor("seed003/d", {{"m", 2047}}));
    FAIL() << "no error";
  } catch (const kernels::ParamError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("seed003/d: m (M) = 2047 does not split into 2 equal blocks over "
                           "axis 'x'; give a positive multiple of 2."),
              std::string::npos)
        << message;
    EXPECT_EQ(e.params(), std::vector<std::string>{"m"});
  }
}

TEST(Seed003Errors, NeedsAMeshWithAxesXAndY) {
  try {
    Entry("seed003/b")
        .make(dsl::Mesh(testing::MakeTopology({4}, {false})), ParamsFor("seed003/b", {}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed003/b runs over mesh axis 'y'"), std::string::npos)
        << e.what();
  }
}

// The 8-way axis of the ar_vs_ag and mlp programs: one x-row of v5e-8x16 (8 chips, no
// wraparound, as every v5e axis shorter than 16), alone so the tests stay small.
dsl::Mesh EightChipRow() {
  return dsl::Mesh(testing::MakeTopology({8}, {false}));
}

TEST(ArVsAg, BothSchedulesMatchTheHostReference) {
  const kernels::ParamValues args = {{"m", 64}, {"k", 512}, {"n", 256}};
  RunAndCompare("ar_vs_ag/allreduce", EightChipRow(), args);
  RunAndCompare("ar_vs_ag/allgather", EightChipRow(), args);
}

TEST(ArVsAg, NeedsTheBatchSize) {
  try {
    Entry("ar_vs_ag/allreduce").Bind({});
    FAIL() << "no error";
  } catch (const kernels::ParamError& e) {
    EXPECT_NE(std::string(e.what()).find("needs parameter 'm'"), std::string::npos) << e.what();
    EXPECT_EQ(e.params(), std::vector<std::string>{"m"});
  }
}

TEST(Mlp, EveryLayoutMatchesTheHostReference) {
  const kernels::ParamValues args = {{"m", 64}, {"k", 256}, {"n", 512}};
  for (const char* layout : {"replicated", "dp", "fsdp", "tp"})
    RunAndCompare(std::string("mlp/") + layout, EightChipRow(), args);
}

// On an axis without wraparound the ring all-gather ends at different times on different
// devices, so in a second collective a device may signal its neighbour's barrier semaphore
// before that neighbour has entered the call. The barrier semaphore is the chip's for the
// whole program (collective_id 0), as on a TPU, so the start barrier holds the signal
// instead of failing (mlp/fsdp does exactly this).
TEST(Programs, ACollectiveAfterUnevenWorkMeetsItsNeighbours) {
  const dsl::Mesh mesh = EightChipRow();
  const dsl::Array x = dsl::Array::Random({64, 128}, dsl::DType::kBF16, 3);
  auto program = dsl::shard_map(
      mesh, {dsl::P{"x", nullptr}}, {dsl::P{}},
      [](dsl::ProgramContext& ctx, const std::vector<dsl::Value>& in) {
        dsl::Value once = ctx.all_gather(in[0], "x", 0, /*tiled=*/true);
        dsl::Value slice = ctx.dynamic_slice(once, {ctx.axis_index("x") * 8, 0}, {8, 128});
        return std::vector<dsl::Value>{ctx.all_gather(ctx.relu(slice), "x", 0, /*tiled=*/true)};
      });
  testing::CheckedRun run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  dsl::Array relu({64, 128}, dsl::DType::kBF16);
  for (int64_t i = 0; i < x.size(); ++i)
    relu.SetFlat(i, std::max(0.0, x.GetFlat(i)));
  EXPECT_TRUE(dsl::CompareExact(run.result.outputs[0], relu).equal);
}

TEST(Mlp, NamesTheAxisItNeeds) {
  try {
    Entry("mlp/tp").make(EightChipRow(), ParamsFor("mlp/tp", {{"axis", "z"}}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("axis 'z'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tpusim
