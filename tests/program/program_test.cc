// Programs: shard_map bodies of array ops, lax collectives and pallas_calls on one
// timeline (dsl/program/context.h).

#include <gtest/gtest.h>

#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;

Array Elementwise(const Array& a, const Array& b, double (*f)(double, double)) {
  Array out(a.shape(), a.dtype());
  for (int64_t i = 0; i < a.size(); ++i)
    out.SetFlat(i, f(a.GetFlat(i), b.GetFlat(i)));
  return out;
}

void ExpectClose(const Array& actual, const Array& expected, double tol, const std::string& what) {
  const Comparison c = CompareClose(actual, expected, tol, tol);
  EXPECT_TRUE(c.equal) << what << ": " << c.detail;
}

TEST(Program, ArrayOpsMatchHostReferences) {
  const Mesh mesh(testing::MakeTopology({2}, {false}));
  const Array a = Array::Random({16, 32}, DType::kF32, 1);
  const Array b = Array::Random({32, 8}, DType::kF32, 2);
  const Array c = Array::Random({16, 32}, DType::kF32, 3);
  auto program =
      shard_map(mesh, {P{}, P{}, P{}}, {P{}, P{}, P{}, P{}, P{}, P{}, P{"x", nullptr}, P{}, P{}},
                [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
                  return {ctx.dot(in[0], in[1], DType::kBF16),
                          ctx.add(in[0], in[2]),
                          ctx.multiply(in[0], in[2]),
                          ctx.max(in[0], in[2]),
                          ctx.relu(in[0]),
                          ctx.astype(in[0], DType::kBF16),
                          ctx.dynamic_slice(in[0], {ctx.axis_index("x") * 8, 0}, {8, 32}),
                          ctx.concatenate({in[0], in[2]}, 1),
                          ctx.zeros({3, 5}, DType::kInt32)};
                });
  auto run = testing::RunAndCheckTrace(program, {a, b, c});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto& out = run.result.outputs;
  Array dot = testing::HostDot(a, b, DType::kBF16);
  ExpectClose(out[0], dot, 1e-2, "dot");
  ExpectClose(out[1], Elementwise(a, c, [](double x, double y) { return x + y; }), 1e-6, "add");
  ExpectClose(out[2], Elementwise(a, c, [](double x, double y) { return x * y; }), 1e-6,
              "multiply");
  ExpectClose(out[3], Elementwise(a, c, [](double x, double y) { return x > y ? x : y; }), 0,
              "max");
  ExpectClose(out[4], Elementwise(a, a, [](double x, double) { return x > 0 ? x : 0; }), 0, "relu");
  Array rounded({16, 32}, DType::kBF16);
  for (int64_t i = 0; i < a.size(); ++i)
    rounded.SetFlat(i, a.GetFlat(i));
  EXPECT_TRUE(CompareExact(out[5], rounded).equal);
  // Each device sliced its own rows: assembled over x they are a again.
  EXPECT_TRUE(CompareExact(out[6], a).equal) << CompareExact(out[6], a).detail;
  Array joined({16, 64}, DType::kF32);
  joined.Place(a, {0, 0});
  joined.Place(c, {0, 32});
  EXPECT_TRUE(CompareExact(out[7], joined).equal);
  EXPECT_TRUE(CompareExact(out[8], Array({3, 5}, DType::kInt32)).equal);
}

// A pallas_call that copies its input to its output with one local DMA.
PallasCall CopyCall(const ShapeDtype& type) {
  GridSpec grid;
  grid.scratch_shapes = {ScratchSpec::DMA({}, "sem")};
  return pallas_call("copy",
                     [](Kernel& k, const Refs& r) {
                       AsyncCopy copy = k.async_copy(r[0], r[1], r[2]);
                       copy.start();
                       copy.wait();
                     },
                     grid, {type});
}

TEST(Program, CollectiveDotAndPallasCallInOneProgram) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  const Array x = Array::Random({64, 128}, DType::kBF16, 4);
  const Array w = Array::Random({128, 128}, DType::kBF16, 5);
  auto program =
      shard_map(mesh, {P{"x", nullptr}, P{}}, {P{}},
                [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
                  Value gathered = ctx.all_gather(in[0], "x", 0, /*tiled=*/true);
                  Value y = ctx.dot(gathered, in[1], DType::kF32);
                  return ctx.pallas_call(CopyCall(y.type()), {y});
                });
  auto run = testing::RunAndCheckTrace(program, {x, w});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  ExpectClose(run.result.outputs[0], testing::HostDot(x, w, DType::kF32), 1e-4, "x @ w");
  EXPECT_GT(run.result.stats.dmas, 0u);
}

TEST(Program, ASinglePallasCallTimesAsTheKernel) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  const PallasCall call = CopyCall({{1024}, DType::kBF16});
  const Array x = Array::Random({4096}, DType::kBF16, 6);
  const auto kernel = shard_map(mesh, {P{"x"}}, {P{"x"}}, call);
  const auto program = shard_map(mesh, {P{"x"}}, {P{"x"}},
                                 [call](ProgramContext& ctx, const std::vector<Value>& in) {
                                   return ctx.pallas_call(call, in);
                                 });
  const RunResult a = kernel.Run({x}, {});
  const RunResult b = program.Run({x}, {});
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  EXPECT_EQ(a.stats.end_time, b.stats.end_time);
  EXPECT_EQ(a.stats.dmas, b.stats.dmas);
  EXPECT_EQ(a.stats.events, b.stats.events);
  EXPECT_TRUE(CompareExact(b.outputs[0], x).equal);
}

// Exposed communication: the time the core waits in all_gather_done, over the run.
double ExposedFraction(int64_t dot_size) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  auto program =
      shard_map(mesh, {P{"x", nullptr}, P{}}, {P{}, P{}},
                [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
                  AsyncValues started = ctx.all_gather_start(in[0], "x", 0, true);
                  Value y = ctx.dot(in[1], in[1]);
                  return {ctx.all_gather_done(started), y};
                });
  RunOptions options;
  options.functional = false;
  auto run = testing::RunAndCheckTrace(program,
                                       {Array::Placeholder({4096, 1024}, DType::kBF16),
                                        Array::Placeholder({dot_size, dot_size}, DType::kBF16)},
                                       options);
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return static_cast<double>(run.result.async_wait[0]) /
         static_cast<double>(run.result.stats.end_time);
}

TEST(Program, AsyncAllGatherHidesBehindALongEnoughDot) {
  EXPECT_LT(ExposedFraction(4096), 0.1);
  // The metric can fail: a tiny dot leaves most of the gather exposed.
  EXPECT_GT(ExposedFraction(128), 0.5);
}

TEST(Program, AsyncAllGatherIsCorrect) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  const Array x = Array::Random({32, 128}, DType::kBF16, 8);
  auto program =
      shard_map(mesh, {P{"x", nullptr}}, {P{}},
                [](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
                  AsyncValues started = ctx.all_gather_start(in[0], "x", 0, true);
                  Value r = ctx.relu(in[0]);
                  return {ctx.all_gather_done(started)};
                });
  auto run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(CompareExact(run.result.outputs[0], x).equal);
}

// all_to_all_start/done: the same data as the blocking all_to_all, and the dot issued in
// between runs while the chunks move, so the async program ends sooner.
TEST(Program, AsyncAllToAllMatchesTheBlockingOneAndOverlapsTheDot) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  const Array x = Array::Random({4 * 256, 512}, DType::kBF16, 10);
  const Array w = Array::Random({512, 512}, DType::kBF16, 11);
  auto run = [&](bool async) {
    auto program = shard_map(
        mesh, {P{"x", nullptr}, P{}}, {P{nullptr, "x"}, P{}},
        [async](ProgramContext& ctx, const std::vector<Value>& in) -> std::vector<Value> {
          if (!async) {
            Value moved = ctx.all_to_all(in[0], "x", /*split_axis=*/0, /*concat_axis=*/1, true);
            return {moved, ctx.dot(in[1], in[1])};
          }
          AsyncValues started = ctx.all_to_all_start(in[0], "x", 0, 1, /*tiled=*/true);
          Value y = ctx.dot(in[1], in[1]);
          return {ctx.all_to_all_done(started), y};
        });
    auto checked = testing::RunAndCheckTrace(program, {x, w}, {},
                                             async ? "all_to_all_async" : "all_to_all_sync");
    EXPECT_TRUE(checked.result.ok) << checked.result.error;
    return checked.result;
  };
  const RunResult blocking = run(false);
  const RunResult async = run(true);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(CompareExact(async.outputs[i], blocking.outputs[i]).equal) << i;
  EXPECT_LT(async.stats.end_time, blocking.stats.end_time);
  EXPECT_EQ(async.stats.dmas, blocking.stats.dmas);
}

uint64_t PeakHbm(bool drop_temporary) {
  const Mesh mesh(testing::MakeTopology({2}, {false}));
  auto program = shard_map(mesh, {P{}}, {P{}},
                           [drop_temporary](ProgramContext& ctx, const std::vector<Value>& in) {
                             Value a = ctx.add(in[0], in[0]);
                             Value b = ctx.relu(a);
                             if (drop_temporary) a = Value();
                             Value c = ctx.relu(b);
                             return std::vector<Value>{c};
                           });
  const RunResult r = program.Run({Array::Random({256}, DType::kF32, 9)}, {});
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.peak_hbm_bytes[0], r.peak_hbm_bytes[1]);
  return r.peak_hbm_bytes[0];
}

TEST(Program, PeakHbmFollowsLiveRanges) {
  // Input, a and b live at once (1 KiB each); c reuses a's room once a is dropped.
  EXPECT_EQ(PeakHbm(true), 3u * 1024);
  EXPECT_EQ(PeakHbm(false), 4u * 1024);
}

}  // namespace
}  // namespace tpusim
