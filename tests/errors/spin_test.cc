// Never a hang: a core that polls a semaphore with semaphore_read lets simulated time pass,
// so the signal it waits for arrives; a poll nobody ends meets the time limit and is
// reported as a poll. A time-limit report on a partly filled semaphore says where the value
// came from.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;
using ::testing::Not;

// A ring of `chips` running `body` on x and out (`elements` f32 each per chip, in HBM),
// with DMA semaphores send and recv and a REGULAR semaphore flag.
ShardMap Ring(int chips, int64_t elements, KernelFn body) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "send"), ScratchSpec::DMA({}, "recv"),
                         ScratchSpec::REGULAR({}, "flag")};
  PallasCall call = pallas_call("spin", std::move(body), grid, {{{elements}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  return shard_map(Mesh(testing::MakeTopology({chips}, {false})), {P{"x"}}, {P{"x"}}, call);
}

TEST(NeverAHang, SpinPollOnASemaphoreEndsWhenTheNeighbourSignals) {
  // Each chip copies its shard into out, tells its right neighbour, and spins until its
  // left neighbour has told it, then consumes the signal.
  auto program = Ring(4, 256, [](Kernel& k, const Refs& r) {
    const Ref& flag = r[4];
    AsyncCopy own = k.async_copy(r[0], r[1], r[2]);
    own.start();
    own.wait();
    const int right = (k.axis_index("x") + 1) % k.axis_size("x");
    k.signal(flag, 1, DeviceId::Logical(right));
    while (k.semaphore_read(flag) < 1) {
    }
    k.wait(flag, 1);
  });
  const Array x = Array::Random({4 * 256}, DType::kF32, 3);
  auto run = testing::RunAndCheckTrace(program, {x}, {}, "spin");
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_EQ(run.result.outputs[0].bytes(), x.bytes());
  // The signal crosses at least one hop (1 us on MakeTopology's v5e), and the spinning
  // chips saw it only because polling let that time pass.
  for (const auto& core : run.result.stats.cores) {
    EXPECT_GE(core.finish, 1'000'000u);
    EXPECT_GT(core.blocked, 0u) << "polling counts as time spent waiting";
  }
}

TEST(NeverAHang, SpinOnASemaphoreNobodySignalsMeetsTheTimeLimit) {
  auto program = Ring(4, 256, [](Kernel& k, const Refs& r) {
    if (k.device_id() != 2) return;
    while (k.semaphore_read(r[4]) == 0) {
    }
  });
  RunOptions options;
  options.time_limit = 1'000'000'000ull;  // 1 ms
  auto run = testing::RunAndCheckTrace(program, {Array::Random({4 * 256}, DType::kF32, 3)}, options,
                                       "spin_forever");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kTimeLimit) << run.result.error;
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("simulated-time limit of 1.000 ms"));
  EXPECT_THAT(e, HasSubstr("chip 2 (x=2) polls REGULAR semaphore 'flag' with semaphore_read"));
  EXPECT_THAT(e, HasSubstr("value 0; nothing has signalled it"));
}

TEST(NeverAHang, SpinThatNothingCanEndIsReportedAsALivelockBeforeTheTimeLimit) {
  // Chips 0, 1 and 3 finish at once; nothing is left that could signal chip 2's flag.
  auto program = Ring(4, 256, [](Kernel& k, const Refs& r) {
    if (k.device_id() != 2) return;
    while (k.semaphore_read(r[4]) == 0) {
    }
  });
  auto run = testing::RunAndCheckTrace(program, {Array::Random({4 * 256}, DType::kF32, 3)}, {},
                                       "spin_livelock");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kDeadlock) << run.result.error;
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("livelock at"));
  EXPECT_THAT(e, HasSubstr("chip 2 (x=2) polls REGULAR semaphore 'flag' with semaphore_read"));
  EXPECT_THAT(e, HasSubstr("value 0; nothing has signalled it"));
  EXPECT_THAT(e, Not(HasSubstr("time limit")));
}

TEST(NeverAHang, SpinsThatCouldStillEndEachOtherMeetTheTimeLimit) {
  // Two chips each spin on their own flag: while the other still runs, a signal could come,
  // so no livelock is proven and the time limit ends the run.
  auto program = Ring(2, 256, [](Kernel& k, const Refs& r) {
    while (k.semaphore_read(r[4]) == 0) {
    }
  });
  RunOptions options;
  options.time_limit = 100'000'000ull;  // 100 us
  auto run = testing::RunAndCheckTrace(program, {Array::Random({2 * 256}, DType::kF32, 3)}, options,
                                       "spin_both");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kTimeLimit) << run.result.error;
  EXPECT_THAT(run.result.error, HasSubstr("polls REGULAR semaphore 'flag' with semaphore_read"));
}

TEST(NeverAHang, SpinsOnEachOtherThatNothingCanEndAreALivelockNotAnHourOfWallTime) {
  // Both chips poll their own flag and neither ever signals: once each has only polled for
  // a million reads and no DMA or signal is in flight, nothing can end either spin. Before,
  // only the time limit ended this, at about two hours of wall time for the default 60 s.
  auto program = Ring(2, 256, [](Kernel& k, const Refs& r) {
    while (k.semaphore_read(r[4]) == 0) {
    }
  });
  auto run = testing::RunAndCheckTrace(program, {Array::Random({2 * 256}, DType::kF32, 3)}, {},
                                       "spin_mutual");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kDeadlock) << run.result.error;
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("livelock at"));
  EXPECT_THAT(e, HasSubstr("chip 0 (x=0) polls REGULAR semaphore 'flag' with semaphore_read"));
  EXPECT_THAT(e, HasSubstr("chip 1 (x=1) polls REGULAR semaphore 'flag' with semaphore_read"));
  // The read count runs on across the waits a poll makes for the other core's events.
  EXPECT_THAT(e, HasSubstr("(1048577 reads since it last did anything else)"));
}

TEST(NeverAHang, TimeLimitReportOnAPartlyFilledSemaphoreSaysWhereTheValueCameFrom) {
  // 8 MiB per chip crosses a 45 GB/s link in ~186 us, in 512 KiB chunks; stopped at 50 us,
  // the receiver's semaphore holds the chunks that have landed.
  constexpr int64_t kElements = 2 * 1024 * 1024;  // f32: 8 MiB per chip
  auto program = Ring(2, kElements, [](Kernel& k, const Refs& r) {
    if (k.device_id() == 0) {
      AsyncCopy copy = k.async_remote_copy(r[0], r[1], r[2], r[3], DeviceId::Logical(1));
      copy.start();
      copy.wait_send();
    } else {
      AsyncCopy copy = k.async_remote_copy(r[0], r[1], r[2], r[3], DeviceId::Logical(1));
      copy.wait_recv();
    }
  });
  RunOptions options;
  options.functional = false;
  options.time_limit = 50'000'000ull;  // 50 us
  auto run = testing::RunAndCheckTrace(program, {Array::Placeholder({2 * kElements}, DType::kF32)},
                                       options, "partial");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kTimeLimit) << run.result.error;
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("chip 1 (x=1) waits in wait_recv on DMA semaphore 'recv'"));
  EXPECT_THAT(e, HasSubstr("from the first chunks of DMAs still landing into it"));
  EXPECT_THAT(e, Not(HasSubstr("value 0")));
  EXPECT_THAT(e, Not(HasSubstr("nothing has signalled it or sent data")));
}

}  // namespace
}  // namespace tpusim
