// The interpreter's own instructions (hlo/run/interpreter.cc), each in a small module run on
// a 2x2 slice: functional runs match the host evaluation on every device, and the steps
// counted in the per-op table are the ones the module runs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "hlo/parser.h"
#include "hlo/run/entry.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;

struct Ran {
  kernels::Workload workload;
  dsl::RunResult result;
  std::map<std::string, dsl::OpTime> ops;
};

// Runs `text` (4 partitions) on v5e-2x2 and checks its data against the host evaluation
// when the run is functional.
Ran RunModule(const std::string& text, bool functional = true) {
  auto module = std::make_shared<const hlo::Module>(hlo::ParseModule(text, "test.hlo"));
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(module, "test.hlo");
  kernels::Params params = info.Bind({});
  params.functional = functional;
  Ran r{info.make(mesh, params), {}, {}};
  dsl::RunOptions options;
  options.functional = functional && r.workload.timing_only_reason.empty();
  r.result = r.workload.program.Run(r.workload.inputs, options);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  if (options.functional && r.result.ok) {
    const dsl::Comparison c = dsl::CheckAgainstReference(
        r.workload.program, r.result, r.workload.expected, r.workload.rtol, r.workload.atol);
    EXPECT_TRUE(c.equal) << c.detail;
  }
  for (const dsl::OpTime& op : r.result.op_times)
    r.ops[op.name] = op;
  return r;
}

const char* kAdd = R"(%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
)";

TEST(HloInterpreter, CombinedAllReduceRunsOncePerOperand) {
  const auto r = RunModule(std::string("HloModule m, num_partitions=4\n\n") + kAdd + R"(
ENTRY %e (x: f32[8,128], y: f32[16]) -> (f32[8,128], f32[16]) {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[16]{0} parameter(1), sharding={devices=[4]<=[4]}
  ROOT %ar = (f32[8,128]{1,0}, f32[16]{0}) all-reduce(f32[8,128]{1,0} %x, f32[16]{0} %y), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add, sharding={{replicated}, {replicated}}
}
)");
  EXPECT_EQ(r.ops.at("ar").count, 2);
  EXPECT_EQ(r.ops.at("ar").kind, "collective");
}

TEST(HloInterpreter, CombinedAsyncAllGatherWaitsForEveryOperandAtItsDone) {
  const auto r = RunModule(R"(HloModule m, num_partitions=4

ENTRY %e (x: f32[8,128], y: f32[2,64]) -> (f32[32,128], f32[8,64]) {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[2,64]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %ags = ((f32[8,128]{1,0}, f32[2,64]{1,0}), (f32[32,128]{1,0}, f32[8,64]{1,0})) all-gather-start(f32[8,128]{1,0} %x, f32[2,64]{1,0} %y), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true
  %neg = f32[8,128]{1,0} negate(f32[8,128]{1,0} %x)
  ROOT %agd = (f32[32,128]{1,0}, f32[8,64]{1,0}) all-gather-done(((f32[8,128]{1,0}, f32[2,64]{1,0}), (f32[32,128]{1,0}, f32[8,64]{1,0})) %ags), sharding={{replicated}, {replicated}}
}
)");
  EXPECT_EQ(r.ops.at("ags").count, 2);
  EXPECT_TRUE(r.ops.at("ags").async);
  EXPECT_EQ(r.ops.at("neg").count, 1);
}

TEST(HloInterpreter, AsyncStartRunsTheOneOpItWraps) {
  const auto r = RunModule(std::string("HloModule m, num_partitions=4\n\n") + kAdd + R"(
%wrapped (p: f32[16,128]) -> f32[4,128] {
  %p = f32[16,128]{1,0} parameter(0)
  ROOT %rs = f32[4,128]{1,0} reduce-scatter(f32[16,128]{1,0} %p), channel_id=2, replica_groups={{0,1,2,3}}, use_global_device_ids=true, dimensions={0}, to_apply=%add
}

ENTRY %e (x: f32[16,128]) -> f32[4,128] {
  %x = f32[16,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %start = ((f32[16,128]{1,0}), f32[4,128]{1,0}) async-start(f32[16,128]{1,0} %x), calls=%wrapped
  %update = ((f32[16,128]{1,0}), f32[4,128]{1,0}) async-update(((f32[16,128]{1,0}), f32[4,128]{1,0}) %start)
  ROOT %done = f32[4,128]{1,0} async-done(((f32[16,128]{1,0}), f32[4,128]{1,0}) %update), sharding={devices=[4,1]<=[4]}
}
)");
  EXPECT_TRUE(r.ops.at("start").async);
  EXPECT_EQ(r.ops.at("start").count, 1);
}

TEST(HloInterpreter, CopyStartAndDoneCopyBesideTheOpsBetween) {
  const auto r = RunModule(R"(HloModule m, num_partitions=4

ENTRY %e (x: f32[64,128]) -> f32[64,128] {
  %x = f32[64,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %cs = (f32[64,128]{1,0}, f32[64,128]{1,0}, u32[]) copy-start(f32[64,128]{1,0} %x)
  %e1 = f32[64,128]{1,0} exponential(f32[64,128]{1,0} %x)
  %cd = f32[64,128]{1,0} copy-done((f32[64,128]{1,0}, f32[64,128]{1,0}, u32[]) %cs)
  ROOT %sum = f32[64,128]{1,0} add(f32[64,128]{1,0} %e1, f32[64,128]{1,0} %cd), sharding={devices=[4,1]<=[4]}
}
)");
  EXPECT_TRUE(r.ops.at("cs").async);
  EXPECT_EQ(r.ops.at("e1").count, 1);
}

const char* kLoop = R"(HloModule m, num_partitions=4

%body (s: (s32[], f32[8,128])) -> (s32[], f32[8,128]) {
  %s = (s32[], f32[8,128]{1,0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[8,128]{1,0}) %s), index=0
  %v = f32[8,128]{1,0} get-tuple-element((s32[], f32[8,128]{1,0}) %s), index=1
  %t = f32[8,128]{1,0} tanh(f32[8,128]{1,0} %v)
  %two = s32[] constant(2)
  %n = s32[] add(s32[] %i, s32[] %two)
  ROOT %r = (s32[], f32[8,128]{1,0}) tuple(s32[] %n, f32[8,128]{1,0} %t)
}

%cond (c: (s32[], f32[8,128])) -> pred[] {
  %c = (s32[], f32[8,128]{1,0}) parameter(0)
  %j = s32[] get-tuple-element((s32[], f32[8,128]{1,0}) %c), index=0
  %limit = s32[] constant(7)
  ROOT %lt = pred[] compare(s32[] %j, s32[] %limit), direction=LT
}

ENTRY %e (x: f32[8,128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %zero = s32[] constant(1)
  %init = (s32[], f32[8,128]{1,0}) tuple(s32[] %zero, f32[8,128]{1,0} %x)
  %w = (s32[], f32[8,128]{1,0}) while((s32[], f32[8,128]{1,0}) %init), condition=%cond, body=%body
  ROOT %out = f32[8,128]{1,0} get-tuple-element((s32[], f32[8,128]{1,0}) %w), index=1, sharding={devices=[4,1]<=[4]}
}
)";

TEST(HloInterpreter, AWhileLoopWithoutKnownTripCountRunsAsItsCounterSays) {
  // From 1 in steps of 2 while below 7: 1, 3, 5 run the body; the condition runs 4 times.
  const auto functional = RunModule(kLoop);
  EXPECT_EQ(functional.ops.at("t").count, 3);
  EXPECT_EQ(functional.ops.at("lt").count, 4);
  const auto timing = RunModule(kLoop, false);
  EXPECT_EQ(timing.ops.at("t").count, 3);
  EXPECT_EQ(timing.result.time(), functional.result.time());
}

std::string Conditional(const std::string& selector) {
  return std::string(R"(HloModule m, num_partitions=4

%cheap (a: f32[8,128]) -> f32[8,128] {
  %a = f32[8,128]{1,0} parameter(0)
  ROOT %n = f32[8,128]{1,0} negate(f32[8,128]{1,0} %a)
}

%costly (b: f32[8,128]) -> f32[8,128] {
  %b = f32[8,128]{1,0} parameter(0)
  %e1 = f32[8,128]{1,0} exponential(f32[8,128]{1,0} %b)
  %e2 = f32[8,128]{1,0} exponential(f32[8,128]{1,0} %e1)
  ROOT %e3 = f32[8,128]{1,0} tanh(f32[8,128]{1,0} %e2)
}

ENTRY %e (x: f32[8,128], p: pred[]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %p = pred[] parameter(1), sharding={replicated}
  )") + selector +
         R"(
  ROOT %c = f32[8,128]{1,0} conditional(pred[] %sel, f32[8,128]{1,0} %x, f32[8,128]{1,0} %x), true_computation=%cheap, false_computation=%costly, sharding={devices=[4,1]<=[4]}
}
)";
}

TEST(HloInterpreter, AConstantSelectorPicksItsBranch) {
  const auto r = RunModule(Conditional("%sel = pred[] constant(true)"));
  EXPECT_EQ(r.ops.count("n"), 1u);
  EXPECT_EQ(r.ops.count("e1"), 0u);
}

TEST(HloInterpreter, TimingOnlyTakesTheSlowestBranchOfADataDependentConditional) {
  const auto r = RunModule(Conditional("%sel = pred[] copy(pred[] %p)"), false);
  EXPECT_EQ(r.ops.count("e1"), 1u);
  EXPECT_EQ(r.ops.count("n"), 0u);
  ASSERT_FALSE(r.workload.notes.empty());
  EXPECT_THAT(r.workload.notes[0], HasSubstr("slowest branch, %costly"));
}

TEST(HloInterpreter, CallRunsItsComputationInline) {
  const auto r = RunModule(R"(HloModule m, num_partitions=4

%inner (a: f32[8,128]) -> f32[8,128] {
  %a = f32[8,128]{1,0} parameter(0)
  ROOT %l = f32[8,128]{1,0} logistic(f32[8,128]{1,0} %a)
}

ENTRY %e (x: f32[8,128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %c = f32[8,128]{1,0} call(f32[8,128]{1,0} %x), to_apply=%inner, sharding={devices=[4,1]<=[4]}
}
)");
  EXPECT_EQ(r.ops.at("l").count, 1);
}

// collective-broadcast: each group's first listed device sends its x to the group (the
// functional run checks every device against the host evaluation, whose inputs differ by
// device), as a lax collective_broadcast whose algorithm the collectives table reports.
TEST(HloInterpreter, CollectiveBroadcastSendsEachGroupsFirstDevicesOperand) {
  const auto r = RunModule(R"(HloModule m, num_partitions=4

ENTRY %e (x: f32[8,128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %cb = f32[8,128]{1,0} collective-broadcast(f32[8,128]{1,0} %x), channel_id=1, replica_groups={{1,0},{3,2}}, sharding={devices=[4,1]<=[4]}
}
)");
  EXPECT_TRUE(r.workload.timing_only_reason.empty()) << r.workload.timing_only_reason;
  EXPECT_EQ(r.ops.at("cb").kind, "collective");
  EXPECT_EQ(r.ops.at("cb").op, "collective-broadcast");
  ASSERT_EQ(r.result.collectives.size(), 1u);
  EXPECT_EQ(r.result.collectives[0].op, "collective_broadcast");
  EXPECT_FALSE(r.result.collectives[0].algorithm.empty());
  EXPECT_GT(r.ops.at("cb").total, 0);
}

// Its async form (async-start wrapping it) with groups in transposed iota form:
// [2,2]<=[2,2]T(1,0) is {0,2},{1,3}.
TEST(HloInterpreter, AsyncCollectiveBroadcastWithIotaGroupsRunsOnceAsAsync) {
  const auto r = RunModule(R"(HloModule m, num_partitions=4

%wrapped (p: f32[8,128]) -> f32[8,128] {
  %p = f32[8,128]{1,0} parameter(0)
  ROOT %cb = f32[8,128]{1,0} collective-broadcast(f32[8,128]{1,0} %p), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0)
}

ENTRY %e (x: f32[8,128]) -> (f32[8,128], f32[8,128]) {
  %x = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %start = ((f32[8,128]{1,0}), f32[8,128]{1,0}) async-start(f32[8,128]{1,0} %x), calls=%wrapped
  %neg = f32[8,128]{1,0} negate(f32[8,128]{1,0} %x)
  %done = f32[8,128]{1,0} async-done(((f32[8,128]{1,0}), f32[8,128]{1,0}) %start)
  ROOT %t = (f32[8,128]{1,0}, f32[8,128]{1,0}) tuple(%done, %neg), sharding={{devices=[4,1]<=[4]}, {devices=[4,1]<=[4]}}
}
)");
  EXPECT_TRUE(r.workload.timing_only_reason.empty()) << r.workload.timing_only_reason;
  EXPECT_TRUE(r.ops.at("start").async);
  EXPECT_EQ(r.ops.at("start").count, 1);
  EXPECT_EQ(r.ops.at("neg").count, 1);
  ASSERT_EQ(r.result.collectives.size(), 1u);
  EXPECT_EQ(r.result.collectives[0].op, "collective_broadcast");
}

// A scheduled module runs in its text order, XLA's schedule: the permute hides behind the
// dot only when the dot is printed between its start and its done.
TEST(HloInterpreter, AScheduledModuleRunsInItsOrder) {
  auto module = [](bool dot_between) {
    const std::string start =
        "  %s = (f32[256,256]{1,0}, f32[256,256]{1,0}, u32[], u32[]) "
        "collective-permute-start(f32[256,256]{1,0} %x), channel_id=1, "
        "source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n";
    const std::string dot =
        "  %d = f32[256,256]{1,0} dot(f32[256,256]{1,0} %x, f32[256,256]{1,0} %x), "
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    std::string text =
        "HloModule m, is_scheduled=true, num_partitions=4\n\nENTRY %e (x: f32[256,256]) -> "
        "(f32[256,256], f32[256,256]) {\n  %x = f32[256,256]{1,0} parameter(0)\n";
    text += dot_between ? start + dot : dot + start;
    text +=
        "  %p = f32[256,256]{1,0} collective-permute-done((f32[256,256]{1,0}, f32[256,256]{1,0}, "
        "u32[], u32[]) %s)\n  ROOT %t = (f32[256,256]{1,0}, f32[256,256]{1,0}) tuple(%p, %d)\n}\n";
    return text;
  };
  const auto hidden = RunModule(module(true), false);
  const auto exposed = RunModule(module(false), false);
  EXPECT_LT(hidden.ops.at("s").exposed, exposed.ops.at("s").exposed);
  EXPECT_EQ(exposed.ops.at("s").exposed, exposed.ops.at("s").total);
  EXPECT_LT(hidden.result.time(), exposed.result.time());
}

}  // namespace
}  // namespace tpusim
