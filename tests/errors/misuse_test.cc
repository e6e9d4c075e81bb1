// Layer 4: kernel mistakes end in a clear message, a failed run (never a hang or a crash),
// and a trace that is still valid up to the failure. Each case is a small program that
// must fail with the message checked here.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <new>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "sim/byte_box.h"
#include "sim/simulation.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// A 4-chip ring running `body` with x, out (1024 bf16 each, in HBM), two DMA semaphores
// and one REGULAR semaphore.
ShardMap Program(KernelFn body, std::vector<ScratchSpec> extra_scratch = {}) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "send"), ScratchSpec::DMA({}, "recv"),
                         ScratchSpec::REGULAR({}, "flag")};
  for (auto& s : extra_scratch)
    grid.scratch_shapes.push_back(s);
  PallasCall call = pallas_call("misuse", std::move(body), grid, {{{1024}, DType::kBF16}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  return shard_map(Mesh(testing::MakeTopology({4}, {false})), {P{"x"}}, {P{"x"}}, call);
}

testing::CheckedRun RunExpectingFailure(const ShardMap& program, ErrorKind kind,
                                        base::Picoseconds time_limit = 60'000'000'000'000ull) {
  RunOptions options;
  options.time_limit = time_limit;
  auto run = testing::RunAndCheckTrace(program, {Array::Random({4096}, DType::kBF16, 7)}, options,
                                       "failure");
  EXPECT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, kind) << run.result.error;
  return run;
}

TEST(Misuse, DeadlockReportsEveryBlockedChipAsAWaitForGraph) {
  auto program = Program([](Kernel& k, const Refs& r) {
    if (k.device_id() != 1) return;
    // Waits for a receive nobody sends.
    AsyncCopy copy = k.async_remote_copy(r[0], r[1], r[2], r[3], DeviceId::Logical(0));
    copy.wait_recv();
  });
  auto run = RunExpectingFailure(program, ErrorKind::kDeadlock);
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("deadlock"));
  EXPECT_THAT(e, HasSubstr("1 of 4 chips are blocked"));
  EXPECT_THAT(
      e, HasSubstr("chip 1 (x=1) waits in wait_recv on DMA semaphore 'recv': value 0, needs 2048"));
  EXPECT_THAT(e, HasSubstr("nothing has signalled it"));
  EXPECT_THAT(e, HasSubstr("Finished their kernels"));
}

TEST(Misuse, DeadlockNamesWhatLastTouchedTheSemaphore) {
  auto program = Program([](Kernel& k, const Refs& r) {
    const Ref& flag = r[4];
    if (k.device_id() == 0) k.signal(flag, 1, DeviceId::Logical(2));
    if (k.device_id() == 2) k.wait(flag, 2);  // one signal comes; the second never does
  });
  auto run = RunExpectingFailure(program, ErrorKind::kDeadlock);
  EXPECT_THAT(run.result.error, HasSubstr("REGULAR semaphore 'flag': value 1, needs 2"));
  EXPECT_THAT(run.result.error, HasSubstr("signal from chip 0 (x=0)"));
}

TEST(Misuse, SemaphoreNotZeroAtExitNamesTheChipAndSemaphore) {
  auto program = Program([](Kernel& k, const Refs& r) {
    if (k.device_id() == 3) k.signal(r[4], 2);  // over-signalled, never consumed
  });
  auto run = RunExpectingFailure(program, ErrorKind::kSemaphoreNotZero);
  EXPECT_THAT(run.result.error,
              HasSubstr("chip 3 (x=3) ends its kernel with REGULAR semaphore 'flag' at 2"));
}

TEST(Misuse, UnwaitedDmaLeavesItsSemaphoresNonZero) {
  auto program = Program([](Kernel& k, const Refs& r) {
    if (k.device_id() != 0) return;
    AsyncCopy copy = k.async_remote_copy(r[0], r[1], r[2], r[3], DeviceId::Logical(1));
    copy.start();  // neither side waits
  });
  auto run = RunExpectingFailure(program, ErrorKind::kSemaphoreNotZero);
  EXPECT_THAT(run.result.error, HasSubstr("DMA semaphore 'send' at 2048"));
  EXPECT_THAT(run.result.error,
              HasSubstr("chip 1 (x=1) ends its kernel with DMA semaphore 'recv' at 2048"));
}

// A DMA's label is written only when something reads it (dsl/copy_label.h): the reports
// that do still name the copy as the kernel wrote it, slices and device included.
TEST(Misuse, DeadlockNamesTheDmaThatLastRaisedTheSemaphore) {
  auto program = Program([](Kernel& k, const Refs& r) {
    if (k.device_id() == 0) {
      AsyncCopy copy = k.async_remote_copy(r[0].at(ds(0, 512)), r[1].at(ds(512, 512)), r[2], r[3],
                                           DeviceId::Logical(1));
      copy.start();
      copy.wait_send();
    }
    if (k.device_id() == 1) {  // waits for two halves; one comes
      AsyncCopy whole = k.async_remote_copy(r[0], r[1], r[2], r[3], DeviceId::Logical(0));
      whole.wait_recv();
    }
  });
  auto run = RunExpectingFailure(program, ErrorKind::kDeadlock);
  EXPECT_THAT(run.result.error,
              HasSubstr("DMA 'remote copy x.at[ds(0, 512)] -> device 1 out.at[ds(512, 512)]'"));
}

TEST(Misuse, WaitSendOnALocalCopyNamesTheCopy) {
  auto program = Program([](Kernel& k, const Refs& r) {
    AsyncCopy copy = k.async_copy(r[0].at(ds(0, 8)), r[1].at(ds(8, 8)), r[3]);
    copy.start();
    copy.wait_send();
  });
  auto run = RunExpectingFailure(program, ErrorKind::kSemaphoreMisuse);
  EXPECT_THAT(run.result.error, HasSubstr("wait_send() on the local copy 'copy x.at[ds(0, 8)] -> "
                                          "out.at[ds(8, 8)]'; a local copy has one semaphore"));
}

TEST(Misuse, DeviceOutsideTheMesh) {
  auto program = Program([](Kernel& k, const Refs& r) {
    AsyncCopy copy = k.async_remote_copy(r[0], r[1], r[2], r[3], {{"x", k.axis_index("x") + 1}});
    copy.start();
    copy.wait();
  });
  auto run = RunExpectingFailure(program, ErrorKind::kKernelMisuse);
  EXPECT_THAT(run.result.error, HasSubstr("{'x': 4} is outside Mesh('x': 4)"));
  EXPECT_THAT(run.result.error, HasSubstr("% axis_size"));
}

// The model's own check under the DSL's: a DMA request naming a chip the slice does not
// have (as another front end on sim/ could make) fails the run instead of crashing it.
TEST(Misuse, SimRejectsADmaToAChipOutsideTheSlice) {
  sim::Simulation system(testing::MakeTopology({4}, {false}), {});
  const base::BufferHandle source = system.Allocate(0, base::MemorySpace::kHbm, 4096, "x");
  const base::SemaphoreHandle send = system.AddSemaphore(0, base::SemaphoreKind::kDma, "send");
  const base::SemaphoreHandle recv = system.AddSemaphore(0, base::SemaphoreKind::kDma, "recv");
  const auto outcome = system.Run([&](base::CorePort& core) {
    if (core.chip() != 0) return;
    base::DmaRequest request;
    request.source = {source, {0, {4096}, {1}, 1}};
    request.destination = {{4, base::MemorySpace::kHbm, 0}, {0, {4096}, {1}, 1}};
    request.has_send_semaphore = true;
    request.send_semaphore = send;
    request.recv_semaphore = recv;
    request.label = "to nowhere";
    core.StartDma(request);
  });
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error_kind, ErrorKind::kKernelMisuse);
  EXPECT_THAT(outcome.error,
              HasSubstr("DMA 'to nowhere' from chip 0 (x=0) targets chip 4, which is outside the "
                        "4-chip slice."));
}

// A DMA's check finds its semaphores in the chips' tables (SemaphoreTable::FindDma); one
// that exists and counts bytes, named by a DMA it does not belong to, fails as the first time
// would: chip 1's receive semaphore for a copy that lands on chip 0.
TEST(Misuse, SimRejectsAReceiveSemaphoreOfAnotherChipAfterAGoodDmaUsedIt) {
  sim::Simulation system(testing::MakeTopology({2}, {false}), {});
  const base::BufferHandle source = system.Allocate(0, base::MemorySpace::kHbm, 4096, "x");
  const base::BufferHandle local = system.Allocate(0, base::MemorySpace::kHbm, 4096, "y");
  const base::BufferHandle remote = system.Allocate(1, base::MemorySpace::kHbm, 4096, "y");
  const base::SemaphoreHandle recv = system.AddSemaphore(1, base::SemaphoreKind::kDma, "recv");
  int started = 0;
  const auto outcome = system.Run([&](base::CorePort& core) {
    if (core.chip() != 0) return;
    base::DmaRequest request;
    request.source = {source, {0, {4096}, {1}, 1}};
    request.destination = {remote, {0, {4096}, {1}, 1}};
    request.recv_semaphore = recv;
    request.label = "to chip 1";
    core.StartDma(request);
    ++started;
    request.destination = {local, {0, {4096}, {1}, 1}};
    request.label = "to chip 0";
    core.StartDma(request);
    ++started;
  });
  EXPECT_EQ(started, 1) << "the second DMA fails its check";
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error_kind, ErrorKind::kSemaphoreMisuse);
  EXPECT_THAT(outcome.error,
              HasSubstr("DMA 'to chip 0' from chip 0 (x=0): its receive semaphore 'recv' is a "
                        "DMA semaphore"));
}

// The DMA engine remembers the buffers it has checked (sim/dma_buffer_cache.h) only until
// a buffer is freed: a DMA into a buffer that an earlier DMA wrote, freed since, fails.
TEST(Misuse, SimRejectsADmaIntoABufferFreedAfterAnEarlierDmaWroteIt) {
  sim::Simulation system(testing::MakeTopology({2}, {false}), {});
  const base::BufferHandle source = system.Allocate(0, base::MemorySpace::kHbm, 4096, "x");
  const base::BufferHandle target = system.Allocate(1, base::MemorySpace::kHbm, 4096, "y");
  const base::SemaphoreHandle recv = system.AddSemaphore(1, base::SemaphoreKind::kDma, "recv");
  const base::SemaphoreHandle done = system.AddSemaphore(0, base::SemaphoreKind::kRegular, "done");
  int started = 0;
  const auto outcome = system.Run([&](base::CorePort& core) {
    base::DmaRequest request;
    request.source = {source, {0, {4096}, {1}, 1}};
    request.destination = {target, {0, {4096}, {1}, 1}};
    request.recv_semaphore = recv;
    if (core.chip() == 1) {  // waits for the copy, frees its buffer, tells chip 0
      core.Wait(recv, 4096, base::WaitKind::kDmaRecv, "wait_recv");
      core.Free(target);
      core.Signal(done, 1);
      return;
    }
    request.label = "first";
    core.StartDma(request);
    ++started;
    core.Wait(done, 1, base::WaitKind::kSemaphore, "semaphore_wait");
    request.label = "second";
    core.StartDma(request);
    ++started;
  });
  EXPECT_EQ(started, 1) << "the second DMA fails its check";
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error_kind, ErrorKind::kKernelMisuse);
  EXPECT_THAT(outcome.error, HasSubstr("DMA 'second' from chip 0 (x=0): the buffer written does "
                                       "not exist (freed, or never allocated)."));
}

// A free forgets what the DMA engines remember only when they remember the buffer freed
// (Memory::NoteRemembered): chip 1 frees a temporary no DMA named, then the buffer the first
// DMA wrote, and makes a new buffer of its size in the freed space. The second DMA still names
// the freed buffer, and fails.
TEST(Misuse, SimRejectsADmaIntoAFreedBufferAfterFreesOfBuffersNoDmaNamed) {
  sim::Simulation system(testing::MakeTopology({2}, {false}), {});
  const base::BufferHandle source = system.Allocate(0, base::MemorySpace::kHbm, 4096, "x");
  const base::BufferHandle target = system.Allocate(1, base::MemorySpace::kHbm, 4096, "y");
  const base::SemaphoreHandle recv = system.AddSemaphore(1, base::SemaphoreKind::kDma, "recv");
  const base::SemaphoreHandle done = system.AddSemaphore(0, base::SemaphoreKind::kRegular, "done");
  int started = 0;
  const auto outcome = system.Run([&](base::CorePort& core) {
    base::DmaRequest request;
    request.source = {source, {0, {4096}, {1}, 1}};
    request.destination = {target, {0, {4096}, {1}, 1}};
    request.recv_semaphore = recv;
    if (core.chip() == 1) {
      core.Wait(recv, 4096, base::WaitKind::kDmaRecv, "wait_recv");
      core.Free(core.Allocate(base::MemorySpace::kHbm, 4096, "temporary", {}));
      core.Free(target);
      core.Allocate(base::MemorySpace::kHbm, 4096, "reused", {});
      core.Signal(done, 1);
      return;
    }
    for (const uint64_t half : {0, 1}) {  // each half of the buffer; the second finds the memo
      request.source.box.offset = request.destination.box.offset = half * 2048;
      request.source.box.counts = request.destination.box.counts = {2048};
      request.label = half == 0 ? "first" : "second";
      core.StartDma(request);
      ++started;
    }
    core.Wait(done, 1, base::WaitKind::kSemaphore, "semaphore_wait");
    request.label = "after the free";
    core.StartDma(request);
    ++started;
  });
  EXPECT_EQ(started, 2) << "the third DMA fails its check";
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error_kind, ErrorKind::kKernelMisuse);
  EXPECT_THAT(outcome.error,
              HasSubstr("DMA 'after the free' from chip 0 (x=0): the buffer written does not "
                        "exist (freed, or never allocated)."));
}

// A handle whose core the chip does not have names no buffer: the DMA fails its check (it
// used to index past the chip's memories), and so does an HBM handle naming core 1, though a
// chip has one HBM and core 0's buffer of that number exists.
TEST(Misuse, SimRejectsADmaFromABufferOfACoreTheChipDoesNotHave) {
  for (const base::MemorySpace space : {base::MemorySpace::kVmem, base::MemorySpace::kHbm}) {
    sim::Simulation system(testing::MakeTopology({2}, {false}), {});
    base::BufferHandle source = system.Allocate(0, space, 4096, "x");
    const base::BufferHandle target = system.Allocate(1, base::MemorySpace::kHbm, 4096, "y");
    const base::SemaphoreHandle recv = system.AddSemaphore(1, base::SemaphoreKind::kDma, "recv");
    source.core = space == base::MemorySpace::kHbm ? 1 : 7;
    const auto outcome = system.Run([&](base::CorePort& core) {
      if (core.chip() != 0) return;
      base::DmaRequest request;
      request.source = {source, {0, {4096}, {1}, 1}};
      request.destination = {target, {0, {4096}, {1}, 1}};
      request.recv_semaphore = recv;
      request.label = "from core " + std::to_string(source.core);
      core.StartDma(request);
    });
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.error_kind, ErrorKind::kKernelMisuse);
    EXPECT_THAT(outcome.error, HasSubstr("DMA 'from core " + std::to_string(source.core) +
                                         "' from chip 0 (x=0): the buffer read does not exist"));
  }
}

// Loads and stores are bounds-checked in the model too, not only by Ref slicing.
TEST(Misuse, SimRejectsALoadPastTheEndOfItsBuffer) {
  sim::Simulation system(testing::MakeTopology({1}, {false}), {});
  const base::BufferHandle tile = system.Allocate(0, base::MemorySpace::kVmem, 4096, "tile");
  const auto outcome = system.Run([&](base::CorePort& core) {
    std::vector<uint8_t> out(4096);
    core.Load({tile, {1024, {4096}, {1}, 1}}, out.data(), "load of 'tile.at[ds(1024, 4096)]'");
  });
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error_kind, ErrorKind::kOutOfBounds);
  EXPECT_THAT(outcome.error, HasSubstr("load of 'tile.at[ds(1024, 4096)]' ends at byte 5120 of "
                                       "'tile', which has only 4096 bytes"));
}

TEST(Misuse, DmaSemaphoreWaitedWithARegularWait) {
  auto program = Program([](Kernel& k, const Refs& r) { k.wait(r[3], 1); });
  auto run = RunExpectingFailure(program, ErrorKind::kSemaphoreMisuse);
  EXPECT_THAT(run.result.error, HasSubstr("semaphore_wait on DMA semaphore 'recv'"));
  EXPECT_THAT(run.result.error, HasSubstr("copy descriptor's wait"));
}

TEST(Misuse, RegularSemaphoreUsedForADma) {
  auto program = Program([](Kernel& k, const Refs& r) {
    AsyncCopy copy = k.async_copy(r[0], r[1], r[4]);
    copy.start();
    copy.wait();
  });
  auto run = RunExpectingFailure(program, ErrorKind::kSemaphoreMisuse);
  EXPECT_THAT(run.result.error, HasSubstr("'flag' is a REGULAR semaphore"));
}

TEST(Misuse, SemaphoreArrayNeedsAnIndex) {
  auto program = Program(
      [](Kernel& k, const Refs& r) {
        AsyncCopy copy = k.async_copy(r[0], r[1], r[5]);
        copy.start();
      },
      {ScratchSpec::DMA({4}, "sems")});
  auto run = RunExpectingFailure(program, ErrorKind::kSemaphoreMisuse);
  EXPECT_THAT(run.result.error,
              HasSubstr("'sems' is an array of 4 semaphores; pick one with sems.at(i)"));
}

TEST(Misuse, LoadFromAnHbmRef) {
  auto program = Program([](Kernel& k, const Refs& r) { k.load(r[0]); });
  auto run = RunExpectingFailure(program, ErrorKind::kKernelMisuse);
  EXPECT_THAT(run.result.error, HasSubstr("Loads are only allowed on VMEM and SMEM references"));
  EXPECT_THAT(run.result.error, HasSubstr("'x', which is in ANY"));
}

TEST(Misuse, OutOfBoundsSliceInsideTheKernel) {
  auto program = Program([](Kernel& k, const Refs& r) {
    AsyncCopy copy = k.async_copy(r[0].at(ds(1000, 64)), r[1].at(ds(0, 64)), r[3]);
    copy.start();
  });
  auto run = RunExpectingFailure(program, ErrorKind::kOutOfBounds);
  EXPECT_THAT(run.result.error, HasSubstr("'x' is sliced out of bounds"));
  EXPECT_THAT(run.result.error, HasSubstr("[1000, 1064)"));
}

TEST(Misuse, CopyBetweenDifferentShapes) {
  auto program = Program([](Kernel& k, const Refs& r) {
    k.async_copy(r[0].at(ds(0, 128)), r[1].at(ds(0, 64)), r[3]);
  });
  auto run = RunExpectingFailure(program, ErrorKind::kKernelMisuse);
  EXPECT_THAT(run.result.error, HasSubstr("needs the same shape and dtype"));
}

TEST(Misuse, RunawayKernelStopsAtTheTimeLimit) {
  auto program = Program([](Kernel& k, const Refs& r) {
    const Ref& flag = r[4];
    const int other = k.device_id() ^ 1;
    while (true) {  // ping-pong forever; each remote signal takes a hop of simulated time
      k.signal(flag, 1, DeviceId::Logical(other));
      k.wait(flag, 1);
    }
  });
  auto run = RunExpectingFailure(program, ErrorKind::kTimeLimit, 1'000'000'000ull /* 1 ms */);
  EXPECT_THAT(run.result.error, HasSubstr("simulated-time limit of 1.000 ms"));
  EXPECT_THAT(run.result.error, HasSubstr("time_limit"));
}

TEST(Misuse, HostOutOfMemoryInAKernelIsACapacityFailureNotAMisuse) {
  // The last resort behind the host-memory estimates: whatever runs out of host memory on a
  // core's thread ends the run with the reason and the fix, as a capacity failure.
  auto program = Program([](Kernel& k, const Refs&) {
    if (k.device_id() == 1) throw std::bad_alloc();
  });
  auto run = RunExpectingFailure(program, ErrorKind::kCapacity);
  EXPECT_THAT(run.result.error, HasSubstr("chip 1 (x=1): the simulator ran out of host memory"));
  EXPECT_THAT(run.result.error, HasSubstr("timing-only"));
}

TEST(Misuse, VmemOverCapacityListsTheAllocations) {
  auto program =
      Program([](Kernel&, const Refs&) {}, {ScratchSpec::VMEM({64 << 20}, DType::kF32, "huge")});
  // Scratch is allocated as each device enters the call, so the failure is in the result.
  auto run = RunExpectingFailure(program, ErrorKind::kCapacity);
  EXPECT_THAT(run.result.error, HasSubstr("VMEM of chip 0 (x=0) is over capacity"));
  EXPECT_THAT(run.result.error, HasSubstr("256 MiB  huge f32[67108864]  <- does not fit"));
  EXPECT_THAT(run.result.error, HasSubstr("128 MiB available"));
}

}  // namespace
}  // namespace tpusim

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

TEST(Races, TwoInFlightDmasWritingTheSameBytes) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({2}, "send"), ScratchSpec::DMA({2}, "recv")};
  // Devices 0 and 2 both copy their block into device 1's out at once.
  KernelFn body = [](Kernel& k, const Refs& r) {
    const int me = k.device_id();
    if (me == 0 || me == 2) {
      AsyncCopy copy =
          k.async_remote_copy(r[0], r[1], r[2].at(me / 2), r[3].at(me / 2), DeviceId::Logical(1));
      copy.start();
      copy.wait_send();
    }
  };
  PallasCall call = pallas_call("double_write", body, grid, {{{1024}, DType::kBF16}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  const ShardMap program =
      shard_map(Mesh(testing::MakeTopology({4}, {false})), {P{"x"}}, {P{"x"}}, call);
  const std::vector<Array> inputs = {Array::Random({4096}, DType::kBF16, 7)};
  auto run = testing::RunAndCheckTrace(program, inputs, {}, "race");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kRace) << run.result.error;
  EXPECT_THAT(run.result.error, HasSubstr("race on chip 1 (x=1), HBM buffer 'out bf16[1024]'"));
  // Both writers are named; which one counts as first depends on how the cores interleave.
  EXPECT_THAT(run.result.error, HasSubstr("DMA 'remote copy x -> device 1 out' (remote) "
                                          "writing into it, by chip 2 (x=2)"));
  EXPECT_THAT(run.result.error, HasSubstr("DMA 'remote copy x -> device 1 out' (remote) "
                                          "writing into it, by chip 0 (x=0)"));
  // Without the happens-before check, copies in flight at once are still caught.
  RunOptions unchecked;
  unchecked.race_check = false;
  run = testing::RunAndCheckTrace(program, inputs, unchecked, "race_unchecked");
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kRace) << run.result.error;
  EXPECT_THAT(run.result.error, HasSubstr("writes bytes of 'out bf16[1024]' on chip 1 (x=1)"));
  EXPECT_THAT(run.result.error, HasSubstr("is still writing"));
  EXPECT_THAT(run.result.error, HasSubstr("N-buffering"));
}

TEST(Races, ColumnBlocksOfOneMatrixDoNotOverlap) {
  // Two [4, 8] column blocks of a [4, 16] f32 matrix: their byte ranges interleave but
  // share no byte; a single element more does.
  base::ByteBox left{0, {4, 8}, {64, 4}, 4};
  base::ByteBox right{32, {4, 8}, {64, 4}, 4};
  base::ByteBox wider{0, {4, 9}, {64, 4}, 4};
  EXPECT_FALSE(sim::BoxesOverlap(left, right));
  EXPECT_TRUE(sim::BoxesOverlap(wider, right));
  EXPECT_TRUE(sim::BoxesOverlap(left, left));
}

}  // namespace
}  // namespace tpusim
