// The modules of examples/hlo/ run as registry entries: each one's collectives are the ones
// its text states, and each op's time is what the time model's formula gives (docs/
// time-model.md; docs/references.md §3 for the collectives), within the stated tolerance.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "base/work.h"
#include "hlo/run/entry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

std::string Example(const std::string& name) {
  return std::string(TPUSIM_SOURCE_DIR) + "/examples/hlo/" + name;
}

struct Timed {
  dsl::RunResult result;
  std::map<std::string, dsl::OpTime> ops;  // by step name
  double Seconds(const std::string& step) const { return ops.at(step).total * 1e-12; }
  double Exposed(const std::string& step) const { return ops.at(step).exposed * 1e-12; }
};

Timed RunExample(const std::string& name, const config::Topology& topology) {
  const dsl::Mesh mesh(topology);
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(Example(name));
  kernels::Params params = info.Bind({});
  params.functional = false;
  const kernels::Workload w = info.make(mesh, params);
  dsl::RunOptions options;
  options.functional = false;
  Timed t;
  t.result = w.program.Run(w.inputs, options);
  EXPECT_TRUE(t.result.ok) << t.result.error;
  for (const dsl::OpTime& op : t.result.op_times)
    t.ops[op.name] = op;
  return t;
}

// A one-way link's bytes per second and a hop's latency, as the topology states them.
double LinkBytesPerSecond(const config::Topology& t) {
  return t.ici().link_bandwidth_bytes_per_s();
}
double HopSeconds(const config::Topology& t) {
  return t.ici().hop_latency_ns() * 1e-9;
}
// What a remote semaphore takes beyond the hops, and an op's launch (docs/time-model.md).
double SignalSeconds(const config::Topology& t) {
  return t.ici().signal_latency_ns() * 1e-9;
}
double LaunchSeconds(const config::Topology& t) {
  return t.chip().cost().op_launch_ns() * 1e-9;
}

config::Topology Ring8() {
  return testing::MakeTopology({8}, {true});
}

TEST(HloExamples, ShardedMatmulMovesWeightsMultipliesAndSumsOverY) {
  const config::Topology topology = topologies::LoadTopology("v5e-2x4");
  const Timed t = RunExample("sharded_matmul_permute.hlo", topology);
  ASSERT_EQ(t.ops.count("collective-permute"), 1u);
  ASSERT_EQ(t.ops.count("all-reduce"), 1u);
  EXPECT_EQ(t.ops.at("collective-permute").kind, "collective");
  EXPECT_EQ(t.ops.at("all-reduce").op, "all-reduce");
  // The dot fusion is one op, as the compute model times it: 2 x 1024 x 1024 x 2048 bf16
  // FLOPs, its operands read and its result written through HBM once (within a cycle's
  // rounding).
  const base::XlaOp fusion = testing::XlaDotWork(
      2.0 * 1024 * 1024 * 2048, base::MxuInput::kBF16, base::Precision::kDefault,
      1024 * 1024 * 2 + 1024 * 2048 * 2, 1024 * 2048 * 4);
  EXPECT_NEAR(t.Seconds("dot_fusion"), testing::ModelSeconds(topology.chip(), fusion), 1e-8);
  // w's 4 MiB shard moves one step along 'y' over one link (the wrapping pair takes the
  // long way, on links the others do not use): bytes / W_oneway plus the hops, the receive
  // semaphore's signal latency and the launch, within 5%.
  const double permute = 4.0 * 1024 * 1024 / LinkBytesPerSecond(topology) +
                         3 * HopSeconds(topology) + SignalSeconds(topology) +
                         LaunchSeconds(topology);
  EXPECT_NEAR(t.Seconds("collective-permute"), permute, 0.05 * permute);
  // The 8 MiB f32 sum over a 'y' row of 4 without wraparound: 2 (V / W_oneway)(X-1)/X
  // (docs/references.md §3), plus 2 steps of a hop and a signal and the launch, within
  // 20%.
  const double all_reduce = 2 * (8.0 * 1024 * 1024 / LinkBytesPerSecond(topology)) * 3 / 4 +
                            6 * (HopSeconds(topology) + SignalSeconds(topology)) +
                            LaunchSeconds(topology);
  EXPECT_NEAR(t.Seconds("all-reduce"), all_reduce, 0.2 * all_reduce);
  const double total = t.result.time() * 1e-12;
  EXPECT_NEAR(total,
              t.Seconds("collective-permute") + t.Seconds("dot_fusion") + t.Seconds("all-reduce"),
              0.01 * total);
}

TEST(HloExamples, WhileLoopAllGathersEveryLayersWeight) {
  const config::Topology topology = Ring8();
  const Timed t = RunExample("layers_while_all_gather.hlo", topology);
  // known_trip_count is 4: four all-gathers, four layer fusions, five condition checks.
  EXPECT_EQ(t.ops.at("all-gather").count, 4);
  EXPECT_EQ(t.ops.at("layer").count, 4);
  EXPECT_EQ(t.ops.at("lt").count, 5);
  // Each gathers a 2 MiB weight round a wrapped ring of 8 in X-1 steps, each moving half a
  // shard each way over one hop: (X-1) (V / (X W_ici) + T_hop) with W_ici = 2 W_oneway
  // (docs/references.md §3: V/W_ici (X-1)/X once the hops are counted), within 10%.
  const double v = 1024.0 * 1024 * 2;
  const double gather = 7 * (v / 8 / (2 * LinkBytesPerSecond(topology)) + HopSeconds(topology));
  EXPECT_NEAR(t.Seconds("all-gather") / 4, gather, 0.10 * gather);
}

TEST(HloExamples, AsyncPermuteOverlapsTheMatmulBetweenItsStartAndDone) {
  const config::Topology topology = Ring8();
  const Timed t = RunExample("async_permute_ring.hlo", topology);
  const dsl::OpTime& permute = t.ops.at("collective-permute-start");
  EXPECT_TRUE(permute.async);
  // The 2 MiB block crosses one link; the matmul runs meanwhile, so the core waits at the
  // done only for what the matmul did not hide.
  const double send = 512.0 * 2048 * 2 / LinkBytesPerSecond(topology) + HopSeconds(topology);
  EXPECT_NEAR(t.Seconds("collective-permute-start"), send, 0.05 * send);
  const double hidden = t.Seconds("matmul");
  EXPECT_GT(hidden, 0);
  EXPECT_NEAR(t.Exposed("collective-permute-start"), t.Seconds("collective-permute-start") - hidden,
              0.05 * send);
  const double total = t.result.time() * 1e-12;
  EXPECT_LT(total, t.Seconds("collective-permute-start") + hidden);  // overlap happened
}

// The seed's three MLP shardings on v5e-2x4 (no wraparound: 'x' a pair, 'y' a line of 4).
// Each dot is the XLA op the compute model times (f32, DEFAULT: one pass; its operands read
// and its result written once, within a cycle's rounding). Data parallel moves nothing, so
// its time is its three steps'. FSDP gathers each weight from 2 KiB shards (U) over all 8
// devices and tensor parallel sums a 2 KiB partial product (V) over all 8, both as two
// stages, the pair along x then the line along y, direct or bidi_ring on a pair being one
// step: L, a barrier with the farthest peer (3 hops and S), the x step (1 hop, S) and the y
// step (3 hops, S), plus the bytes on the busiest link: for FSDP U on x, then on the y link
// 1->2 the 2U blocks of devices 0 and 1 for devices 2 and 3 (8U); for the sum V on x, then
// 4V on that link. Within 3%.
TEST(HloExamples, TheThreeMlpShardingsCommunicateAsTheirModulesSay) {
  const config::Topology topology = topologies::LoadTopology("v5e-2x4");
  const Timed dp = RunExample("mlp_data_parallel.hlo", topology);
  const Timed fsdp = RunExample("mlp_fsdp.hlo", topology);
  const Timed tp = RunExample("mlp_tensor_parallel.hlo", topology);
  auto collectives = [](const Timed& t) {
    int n = 0;
    for (const auto& [name, op] : t.ops)
      n += op.kind == "collective" ? static_cast<int>(op.count) : 0;
    return n;
  };
  EXPECT_EQ(collectives(dp), 0);
  EXPECT_EQ(collectives(fsdp), 2);  // W1 and W2 gathered
  EXPECT_EQ(collectives(tp), 1);    // the partial products summed
  EXPECT_EQ(tp.ops.at("all-reduce").op, "all-reduce");
  auto dot = [&](double m, double k, double n) {
    return testing::ModelSeconds(
        topology.chip(),
        testing::XlaDotWork(2 * m * k * n, base::MxuInput::kF32, base::Precision::kDefault,
                            4 * (m * k + k * n), 4 * m * n));
  };
  EXPECT_NEAR(dp.Seconds("dot"), dot(2, 32, 128), 1e-8);
  EXPECT_NEAR(dp.Seconds("dot.1"), dot(2, 128, 32), 1e-8);
  EXPECT_NEAR(fsdp.Seconds("dot"), dot(2, 32, 128), 1e-8);
  EXPECT_NEAR(tp.Seconds("dot"), dot(16, 32, 16), 1e-8);
  EXPECT_NEAR(tp.Seconds("dot.1"), dot(16, 16, 32), 1e-8);
  const double dp_total = dp.result.time() * 1e-12;
  EXPECT_NEAR(dp_total,
              dp.Seconds("dot") + dp.Seconds("broadcast_maximum_fusion") + dp.Seconds("dot.1"),
              0.01 * dp_total);
  const double steps =
      LaunchSeconds(topology) + 7 * HopSeconds(topology) + 3 * SignalSeconds(topology);
  const double w = LinkBytesPerSecond(topology), u = 2048, v = 2048;
  const double gather = steps + 9 * u / w, sum = steps + 5 * v / w;
  EXPECT_NEAR(fsdp.Seconds("all-gather"), gather, 0.03 * gather);
  EXPECT_NEAR(fsdp.Seconds("all-gather.1"), gather, 0.03 * gather);
  EXPECT_NEAR(tp.Seconds("all-reduce"), sum, 0.03 * sum);
  // Data parallel moves nothing, so it is the fastest of the three.
  EXPECT_LT(dp.result.time(), fsdp.result.time());
  EXPECT_LT(dp.result.time(), tp.result.time());
}

}  // namespace
}  // namespace tpusim

namespace tpusim {
namespace {

class HloExampleData : public ::testing::TestWithParam<const char*> {};

// Functional runs: every device's results match the host evaluation (hlo/reference/), and
// the time is the timing-only run's to the picosecond.
TEST_P(HloExampleData, MatchesTheHostEvaluationAndTimesAsTimingOnly) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x4"));
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(Example(GetParam()));
  kernels::Params params = info.Bind({});
  const kernels::Workload w = info.make(mesh, params);
  ASSERT_TRUE(w.timing_only_reason.empty()) << w.timing_only_reason;
  ASSERT_FALSE(w.expected.empty());
  dsl::RunOptions options;
  const dsl::RunResult functional = w.program.Run(w.inputs, options);
  ASSERT_TRUE(functional.ok) << functional.error;
  const dsl::Comparison check =
      dsl::CheckAgainstReference(w.program, functional, w.expected, w.rtol, w.atol);
  EXPECT_TRUE(check.equal) << check.detail;

  params.functional = false;
  const kernels::Workload shapes = info.make(mesh, params);
  options.functional = false;
  const dsl::RunResult timing = shapes.program.Run(shapes.inputs, options);
  ASSERT_TRUE(timing.ok) << timing.error;
  EXPECT_EQ(timing.time(), functional.time());
}

INSTANTIATE_TEST_SUITE_P(Examples, HloExampleData,
                         ::testing::Values("mlp_data_parallel.hlo", "mlp_fsdp.hlo",
                                           "mlp_tensor_parallel.hlo", "sharded_matmul_permute.hlo",
                                           "layers_while_all_gather.hlo",
                                           "async_permute_ring.hlo"));

}  // namespace
}  // namespace tpusim
