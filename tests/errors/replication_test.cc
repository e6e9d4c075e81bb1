// Values that are not what their specs and devices say: an out_spec that leaves out an
// axis the value differs along (JAX refuses it; the run returned device 0's block), and a
// Value taken from another device or kept from an earlier run (read for free from the
// wrong HBM). Each is an error naming the output or operand, the devices and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

const Mesh& Ring4() {
  static const Mesh mesh(testing::MakeTopology({4}, {true}));
  return mesh;
}

RunResult RunProgram(const ShardMap& program, bool functional = true) {
  RunOptions options;
  options.functional = functional;
  const Array x =
      functional ? Array::Iota({16}, DType::kF32) : Array::Placeholder({16}, DType::kF32);
  return testing::RunAndCheckTrace(program, {x}, options, "replication").result;
}

TEST(Replication, AnOutSpecThatLeavesOutAnAxisTheValueDiffersAlongIsRefused) {
  // Each device returns its own block of x as if it were the same everywhere.
  auto program = shard_map(Ring4(), {P{"x"}}, {P{}},
                           [](ProgramContext&, const std::vector<Value>& in) { return in; });
  const auto r = RunProgram(program);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, ErrorKind::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("output 0 has out_spec P(), which says it is the same on every "
                                 "device along 'x', but devices 1, 2 and 3 hold other values "
                                 "than device 0 (element (0,) is 4, expected 0"));
  EXPECT_THAT(r.error, HasSubstr("make the value the same along 'x' (e.g. psum it over 'x'), "
                                 "or give it an out_spec that names the axis it differs along"));
}

TEST(Replication, APsummedValueIsReplicatedAndReturned) {
  auto program =
      shard_map(Ring4(), {P{"x"}}, {P{}}, [](ProgramContext& ctx, const std::vector<Value>& in) {
        return std::vector<Value>{ctx.psum(in[0], "x")};
      });
  const auto r = RunProgram(program);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.outputs[0].GetFlat(0), 0 + 4 + 8 + 12);
}

// Timing-only runs move no data, so there is nothing to compare: they time the program.
TEST(Replication, TimingOnlyRunsCannotTellAndRun) {
  auto program = shard_map(Ring4(), {P{"x"}}, {P{}},
                           [](ProgramContext&, const std::vector<Value>& in) { return in; });
  const auto r = RunProgram(program, /*functional=*/false);
  EXPECT_TRUE(r.ok) << r.error;
}

// RunOptions::check_replication is shard_map's check_vma: off, the run returns device 0's
// block unchecked, as JAX does.
TEST(Replication, WithTheCheckOffTheCanonicalBlockIsReturned) {
  auto program = shard_map(Ring4(), {P{"x"}}, {P{}},
                           [](ProgramContext&, const std::vector<Value>& in) { return in; });
  RunOptions options;
  options.check_replication = false;
  const auto r =
      testing::RunAndCheckTrace(program, {Array::Iota({16}, DType::kF32)}, options, "unchecked")
          .result;
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(CompareExact(r.outputs[0], Array::Iota({4}, DType::kF32)).equal);
}

// Replicated over one axis of two: only the devices along 'y' are compared.
TEST(Replication, PartialReplicationComparesAlongTheAxesLeftOut) {
  const Mesh mesh(testing::MakeTopology({2, 2}, {false, false}));
  auto program = shard_map(mesh, {P{"x", "y"}}, {P{"x", nullptr}},
                           [](ProgramContext&, const std::vector<Value>& in) { return in; });
  RunOptions options;
  const auto r =
      testing::RunAndCheckTrace(program, {Array::Iota({4, 4}, DType::kF32)}, options, "partial")
          .result;
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("output 0 has out_spec P('x', None), which says it is the same "
                                 "on every device along 'y', but device 1 holds other values "
                                 "than device 0"));
}

// A kernel's output block that differs across devices under P(): the same check.
TEST(Replication, AKernelOutputWrittenDifferentlyPerDeviceIsRefused) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec()};
  PallasCall call =
      pallas_call("per_device", [](Kernel& k, const Refs& r) { k.fill(r[1], k.device_id()); }, grid,
                  {{{8}, DType::kF32}});
  call.out_names = {"ids"};
  auto program = shard_map(Ring4(), {P{"x"}}, {P{}}, call);
  const auto r = RunProgram(program);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("output 0 ('ids') has out_spec P()"));
}

TEST(ValueOwnership, AValueOfAnotherDeviceIsRefused) {
  auto stash = std::make_shared<std::optional<Value>>();
  auto program = shard_map(Ring4(), {P{"x"}}, {P{"x"}},
                           [stash](ProgramContext& ctx, const std::vector<Value>& in) {
                             if (ctx.device_id() == 0) *stash = in[0];
                             // Every device has passed here once the psum is done.
                             const Value sum = ctx.psum(in[0], "x");
                             return std::vector<Value>{ctx.add(sum, **stash)};
                           });
  const auto r = RunProgram(program);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, ErrorKind::kInvalidArgument);
  EXPECT_THAT(r.error, HasSubstr("add: operand 1 (f32[4]) is device 0's value, used on device "));
  EXPECT_THAT(r.error, HasSubstr("Move data between devices with a collective"));
  stash->reset();
}

TEST(ValueOwnership, AResultOfAnotherDeviceIsRefused) {
  auto stash = std::make_shared<std::optional<Value>>();
  auto program = shard_map(Ring4(), {P{"x"}}, {P{"x"}},
                           [stash](ProgramContext& ctx, const std::vector<Value>& in) {
                             if (ctx.device_id() == 0) *stash = in[0];
                             ctx.psum(in[0], "x");
                             return std::vector<Value>{**stash};
                           });
  const auto r = RunProgram(program);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("the shard_map body's result 0 (f32[4]) is device 0's value"));
  stash->reset();
}

TEST(ValueOwnership, AValueKeptFromAnEarlierRunIsRefused) {
  // The first run keeps each device's input; the second adds what the first kept.
  auto kept = std::make_shared<std::vector<Value>>(4);
  auto second = std::make_shared<bool>(false);
  auto program = shard_map(Ring4(), {P{"x"}}, {P{"x"}},
                           [kept, second](ProgramContext& ctx, const std::vector<Value>& in) {
                             Value& mine = (*kept)[static_cast<size_t>(ctx.device_id())];
                             if (!*second) mine = in[0];
                             return std::vector<Value>{ctx.add(in[0], mine)};
                           });
  ASSERT_TRUE(RunProgram(program).ok);
  *second = true;
  const auto r = RunProgram(program);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("add: operand 1 (f32[4]) is a value from an earlier run (or "
                                 "another program)"));
  EXPECT_THAT(r.error, HasSubstr("Pass data between runs as host Arrays"));
  kept->clear();
}

}  // namespace
}  // namespace tpusim
