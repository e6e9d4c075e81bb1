// Extreme hardware values: the topology loader refuses values that cannot describe a chip
// (tests/errors/bounds_test.cc), and a time computed from accepted ones that would not fit
// the simulated clock ends the run with an error naming the values it came from, instead
// of wrapping into a nonsense time ("125.5% of the MXU peak") with a successful exit.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/text.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// The slowest chip the loader accepts: 1 MHz, dots at 1% of the peak, int32 dots of 64
// passes, and memories of 1 TiB, so that large operands fit (timing-only runs hold no
// payload).
config::Topology SlowChip(int chips = 1) {
  return testing::MakeTopology({chips}, {false}, [](config::Topology& t) {
    auto& chip = *t.mutable_chip();
    chip.set_clock_hz(1e6);
    chip.mutable_cost()->set_mxu_efficiency(0.01);
    chip.mutable_cost()->set_int32_dot_passes(64);
    chip.mutable_vmem()->set_capacity_bytes(uint64_t{1} << 40);
    chip.mutable_hbm()->set_capacity_bytes(uint64_t{1} << 40);
  });
}

// One [n, n] x [n, n] int32 dot in VMEM.
ShardMap KernelDot(int64_t n, const config::Topology& topology) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::VMEM({n, n}, DType::kInt32, "a"),
                         ScratchSpec::VMEM({n, n}, DType::kInt32, "acc")};
  PallasCall call = pallas_call("dot", [](Kernel& k, const Refs& r) { k.dot(r[2], r[2], r[3]); },
                                grid, {{{8}, DType::kF32}});
  return shard_map(Mesh(topology), {P{}}, {P{}}, call);
}

RunResult TimingOnly(const ShardMap& program, const std::vector<Array>& inputs,
                     RunOptions options = {}) {
  options.functional = false;
  return testing::RunAndCheckTrace(program, inputs, options, "extreme").result;
}

TEST(HardwareRange, KernelDotTooLongToTimeNamesTheCostParameters) {
  const auto r = TimingOnly(KernelDot(32768, SlowChip()), {Array::Placeholder({8}, DType::kF32)});
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, ErrorKind::kInvalidArgument) << r.error;
  EXPECT_THAT(r.error, HasSubstr("a dot of int32 [32768, 32768] x [32768, 32768] would take "));
  EXPECT_THAT(r.error, HasSubstr("more than the 1000000 s one op may take"));
  EXPECT_THAT(r.error, HasSubstr("chip.cost.mxu_efficiency (0.01), chip.cost.int32_dot_passes "
                                 "(64), chip.mxu_size (128), chip.mxu_count (4) and "
                                 "chip.clock_hz (1000000)"));
}

TEST(HardwareRange, TheSameDotOnAPresetChipIsTimed) {
  const auto r = TimingOnly(KernelDot(4096, testing::MakeTopology({1}, {false})),
                            {Array::Placeholder({8}, DType::kF32)});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GT(r.time(), 0u);
}

TEST(HardwareRange, ProgramDotTooLongToTimeNamesTheOpAndTheBandwidthAndPeak) {
  const int64_t n = 131072;
  auto program = shard_map(Mesh(SlowChip()), {P{}}, {P{}},
                           [](ProgramContext& ctx, const std::vector<Value>& in) {
                             return std::vector<Value>{ctx.dot(in[0], in[0])};
                           });
  const auto r = TimingOnly(program, {Array::Placeholder({n, n}, DType::kInt32)});
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("the op 'dot' would take "));
  EXPECT_THAT(r.error, HasSubstr("chip.hbm.bandwidth_bytes_per_s (819000000000) and the MXU "
                                 "peak (chip.mxu_count 4, chip.mxu_size 128, chip.clock_hz "
                                 "1000000)"));
}

TEST(HardwareRange, ChipSlowdownThatIsNotAPositiveNumberIsRefused) {
  for (const double bad : {std::numeric_limits<double>::infinity(), 0.0, -1.0, std::nan("")}) {
    RunOptions options;
    options.chip_slowdown = {1, bad};
    try {
      TimingOnly(KernelDot(128, testing::MakeTopology({2}, {false})),
                 {Array::Placeholder({16}, DType::kF32)}, options);
      FAIL() << "accepted chip_slowdown " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_THAT(e.what(), HasSubstr("chip_slowdown[1] is " + base::NumberText(bad)));
      EXPECT_THAT(e.what(), HasSubstr("must be a finite number greater than 0"));
    }
  }
}

TEST(HardwareRange, ChipSlowdownWithMoreEntriesThanChipsIsRefused) {
  RunOptions options;
  options.chip_slowdown = {1, 1, 1};
  try {
    TimingOnly(KernelDot(128, testing::MakeTopology({2}, {false})),
               {Array::Placeholder({16}, DType::kF32)}, options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("chip_slowdown has 3 entries, but the slice has 2 chips"));
  }
}

// A slow chip's memories run at their bandwidth / the factor; a factor that would take one
// below what a DMA chunk's time can be counted at is refused before the run, with the most
// the chip takes. (Compute slowed past the clock: tests/modules/compute_model_test.cc.)
TEST(HardwareRange, ChipSlowdownThatWouldStallAMemoryIsRefused) {
  RunOptions options;
  options.chip_slowdown = {1, 1e300};
  try {
    TimingOnly(KernelDot(128, testing::MakeTopology({2}, {false})),
               {Array::Placeholder({16}, DType::kF32)}, options);
    FAIL() << "accepted chip_slowdown 1e300";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("chip_slowdown[1] is 1e+300, which would leave the HBM of "
                                    "chip 1 (x=1) at "));
    EXPECT_THAT(e.what(), HasSubstr("; give a factor of at most 819000000."));
  }
}

TEST(HardwareRange, LinkSlowdownOfALinkTheSliceLacksIsRefused) {
  for (const auto& [slow, message] :
       {std::pair{base::LinkSlowdown{1, "x+", 2},
                  "link_slowdown[0] names the 'x+' link of chip 1 "
                  "(x=1), which the slice does not have; its "
                  "links are x-."},
        std::pair{base::LinkSlowdown{2, "x+", 2},
                  "link_slowdown[0].chip is 2, and the slice has "
                  "2 chips"},
        std::pair{base::LinkSlowdown{0, "x+", 0}, "link_slowdown[0].factor is 0; each entry"}}) {
    RunOptions options;
    options.link_slowdown = {slow};
    try {
      TimingOnly(KernelDot(128, testing::MakeTopology({2}, {false})),
                 {Array::Placeholder({16}, DType::kF32)}, options);
      FAIL() << "accepted " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  }
}

}  // namespace
}  // namespace tpusim
