// Races (layer 4): each double-buffering mistake Pallas interpret mode's detect_races
// catches is reported, by happens-before and not by timing, with the wait that fixes it
// shown to pass. A report names the chip, both accesses in the kernel's terms, when each
// happened and the grid step, and the trace marks both.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "traces/trace_checker.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// Two chips; each holds x f32[8, 128] and out f32[8, 128] in HBM, a VMEM buf and acc of
// the same shape, two local DMA semaphores, a send and a receive semaphore and a REGULAR
// one.
enum Slot { kX, kOut, kBuf, kAcc, kSems, kSend, kRecv, kFree };

ShardMap Program(KernelFn body) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::VMEM({8, 128}, DType::kF32, "buf"),
                         ScratchSpec::VMEM({8, 128}, DType::kF32, "acc"),
                         ScratchSpec::DMA({2}, "sems"),
                         ScratchSpec::DMA({}, "send"),
                         ScratchSpec::DMA({}, "recv"),
                         ScratchSpec::REGULAR({}, "free")};
  PallasCall call = pallas_call("races", std::move(body), grid, {{{8, 128}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  return shard_map(Mesh(testing::MakeTopology({2}, {false})), {P{"x"}}, {P{"x"}}, call);
}

const Array& Input() {
  static const Array x = Array::Random({16, 128}, DType::kF32, 3);
  return x;
}

RunResult RunChecked(const ShardMap& program, const std::string& name, RunOptions options = {}) {
  return testing::RunAndCheckTrace(program, {Input()}, options, name).result;
}

// A kernel without the race runs, and its output is x.
void ExpectCopiesX(KernelFn body, const std::string& name) {
  auto result = RunChecked(Program(std::move(body)), name);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_TRUE(CompareExact(result.outputs[0], Input()).equal);
}

void ExpectRace(const RunResult& result) {
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.error_kind, ErrorKind::kRace) << result.error;
}

// Copies x into buf, then `use` reads buf; with `wait_first` the copy is waited for before.
KernelFn CopyInThen(bool wait_first, const std::function<void(Kernel&, const Refs&)>& use) {
  return [=](Kernel& k, const Refs& r) {
    AsyncCopy in = k.async_copy(r[kX], r[kBuf], r[kSems].at(0));
    in.start();
    if (wait_first) in.wait();
    use(k, r);
    if (!wait_first) in.wait();
    AsyncCopy out = k.async_copy(r[kAcc], r[kOut], r[kSems].at(1));
    out.start();
    out.wait();
  };
}

void LoadIntoAcc(Kernel& k, const Refs& r) {
  k.store(r[kAcc], k.load(r[kBuf]));
}

// A local copy, waited for at once.
void CopyNow(Kernel& k, const Ref& src, const Ref& dst, const Ref& sem) {
  AsyncCopy copy = k.async_copy(src, dst, sem);
  copy.start();
  copy.wait();
}

// What the two-chip kernels below do around the copy under test: chip 1 receives x from
// chip 0 into its buf; chip 0 writes its own x as its output (XToOut), chip 1 its acc
// (AccToOut).
AsyncCopy XToChip1Buf(Kernel& k, const Refs& r) {
  return k.async_remote_copy(r[kX], r[kBuf], r[kSend], r[kRecv], DeviceId::Logical(1));
}
void XToOut(Kernel& k, const Refs& r) {
  CopyNow(k, r[kX], r[kOut], r[kSems].at(0));
}
void AccToOut(Kernel& k, const Refs& r) {
  CopyNow(k, r[kAcc], r[kOut], r[kSems].at(1));
}

// `chip` runs a million times slower than the other.
RunOptions SlowChip(int chip, bool race_check = true) {
  RunOptions options;
  options.chip_slowdown = {1, 1};
  options.chip_slowdown[chip] = 1e6;
  options.race_check = race_check;
  return options;
}

// Every chip of these kernels races alike; the report names whichever chip met it first.
std::string RaceChip(const std::string& error) {
  const size_t begin = error.find("race on ");
  if (begin == std::string::npos) return "(no race report)";
  return error.substr(begin + 8, error.find(", ", begin) - begin - 8);
}

TEST(Races, LoadWhileACopyIntoTheBufferIsInFlight) {
  auto result = RunChecked(Program(CopyInThen(false, LoadIntoAcc)), "race_load");
  ExpectRace(result);
  const std::string& e = result.error;
  const std::string chip = RaceChip(e);
  EXPECT_THAT(e, HasSubstr("race on " + chip + ", VMEM buffer 'buf f32[8,128]'"));
  // Both after the step's loop control, 4 cycles (docs/time-model.md).
  EXPECT_THAT(e, HasSubstr("DMA 'copy x -> buf' writing into it, by " + chip +
                           " at 2.667 ns in pallas_call races > step (0,)"));
  EXPECT_THAT(e, HasSubstr("then load of 'buf', by " + chip +
                           " at 2.667 ns in pallas_call races > step (0,)"));
  EXPECT_THAT(e, HasSubstr("wait_recv"));
}

TEST(Races, LoadAfterWaitingForTheCopyIsFine) {
  ExpectCopiesX(CopyInThen(true, LoadIntoAcc), "race_load_fixed");
}

void AddIntoAcc(Kernel& k, const Refs& r) {
  k.add(r[kAcc], r[kBuf], r[kBuf]);
}

TEST(Races, VpuOpReadingWhileACopyIntoTheBufferIsInFlight) {
  auto result = RunChecked(Program(CopyInThen(false, AddIntoAcc)), "race_vpu");
  ExpectRace(result);
  EXPECT_THAT(result.error, HasSubstr("then add reading 'buf', by " + RaceChip(result.error)));
}

TEST(Races, VpuOpAfterWaitingForTheCopyIsFine) {
  auto result = RunChecked(Program(CopyInThen(true, AddIntoAcc)), "race_vpu_fixed");
  ASSERT_TRUE(result.ok) << result.error;
  Array twice = Input();
  for (int64_t i = 0; i < twice.size(); ++i)
    twice.SetFlat(i, 2 * twice.GetFlat(i));
  EXPECT_TRUE(CompareExact(result.outputs[0], twice).equal);
}

TEST(Races, MxuOpReadingWhileACopyIntoTheBufferIsInFlight) {
  auto body = CopyInThen(false, [](Kernel& k, const Refs& r) {
    run_scoped(k, [&](const Refs& s) { k.dot(r[kBuf], s[0], r[kAcc], false); },
               {ScratchSpec::VMEM({128, 128}, DType::kF32, "w")});
  });
  auto result = RunChecked(Program(body), "race_mxu");
  ExpectRace(result);
  EXPECT_THAT(result.error, HasSubstr("then dot reading 'buf'"));
}

TEST(Races, MxuOpAfterWaitingForTheCopyIsFine) {
  auto body = CopyInThen(true, [](Kernel& k, const Refs& r) {
    run_scoped(k, [&](const Refs& s) { k.dot(r[kBuf], s[0], r[kAcc], false); },
               {ScratchSpec::VMEM({128, 128}, DType::kF32, "w")});
  });
  auto result = RunChecked(Program(body), "race_mxu_fixed");
  EXPECT_TRUE(result.ok) << result.error;
}

// Copies rows 0-3 of x into buf and, while that copy is in flight, rows 4-7 (waited for);
// then loads `rows` of buf into the same rows of acc, waits for the first copy and loads
// rows 0-3 too. Only a load that overlaps rows 0-3 races.
KernelFn LoadRowsWhileTheOtherHalfArrives(Slice rows) {
  return [=](Kernel& k, const Refs& r) {
    AsyncCopy top = k.async_copy(r[kX].at(ds(0, 4)), r[kBuf].at(ds(0, 4)), r[kSems].at(0));
    top.start();
    CopyNow(k, r[kX].at(ds(4, 4)), r[kBuf].at(ds(4, 4)), r[kSems].at(1));
    k.store(r[kAcc].at(rows), k.load(r[kBuf].at(rows)));
    top.wait();
    k.store(r[kAcc].at(ds(0, 4)), k.load(r[kBuf].at(ds(0, 4))));
    AccToOut(k, r);
  };
}

TEST(Races, ALoadOfOtherRowsThanACopyWritesIsFine) {
  ExpectCopiesX(LoadRowsWhileTheOtherHalfArrives(ds(4, 4)), "race_rows_disjoint");
}

TEST(Races, ALoadOfRowsACopyStillWritesIsReportedWithBothSlices) {
  auto result =
      RunChecked(Program(LoadRowsWhileTheOtherHalfArrives(ds(2, 4))), "race_rows_overlap");
  ExpectRace(result);
  EXPECT_THAT(result.error, HasSubstr("DMA 'copy x.at[ds(0, 4)] -> buf.at[ds(0, 4)]' writing"));
  EXPECT_THAT(result.error, HasSubstr("then load of 'buf.at[ds(2, 4)]'"));
}

// Fills buf, starts copying it out, then overwrites it.
KernelFn StoreDuringCopyOut(bool wait_first) {
  return [=](Kernel& k, const Refs& r) {
    AsyncCopy in = k.async_copy(r[kX], r[kBuf], r[kSems].at(0));
    in.start();
    in.wait();
    AsyncCopy out = k.async_copy(r[kBuf], r[kOut], r[kSems].at(1));
    out.start();
    if (wait_first) out.wait();
    k.store(r[kBuf], Array({8, 128}, DType::kF32));
    if (!wait_first) out.wait();
  };
}

TEST(Races, StoreWhileACopyOutOfTheBufferIsInFlight) {
  auto result = RunChecked(Program(StoreDuringCopyOut(false)), "race_store");
  ExpectRace(result);
  EXPECT_THAT(result.error, HasSubstr("DMA 'copy buf -> out' reading from it"));
  EXPECT_THAT(result.error, HasSubstr("then store to 'buf'"));
  EXPECT_THAT(result.error, HasSubstr("wait_send"));
}

TEST(Races, StoreAfterWaitingForTheCopyOutIsFine) {
  ExpectCopiesX(StoreDuringCopyOut(true), "race_store_fixed");
}

// Copies x into buf and buf on to out, waiting for the first copy only with `wait_first`.
KernelFn CopyOutDuringCopyIn(bool wait_first) {
  return [=](Kernel& k, const Refs& r) {
    AsyncCopy in = k.async_copy(r[kX], r[kBuf], r[kSems].at(0));
    in.start();
    if (wait_first) in.wait();
    AsyncCopy out = k.async_copy(r[kBuf], r[kOut], r[kSems].at(1));
    out.start();
    if (!wait_first) in.wait();
    out.wait();
  };
}

TEST(Races, CopyOutStartedWhileACopyIntoTheBufferIsInFlight) {
  auto result = RunChecked(Program(CopyOutDuringCopyIn(false)), "race_dma_dma");
  ExpectRace(result);
  EXPECT_THAT(result.error, HasSubstr("DMA 'copy x -> buf' writing into it"));
  EXPECT_THAT(result.error, HasSubstr("then DMA 'copy buf -> out' reading from it"));
}

TEST(Races, CopyOutAfterWaitingForTheCopyInIsFine) {
  ExpectCopiesX(CopyOutDuringCopyIn(true), "race_dma_dma_fixed");
}

TEST(Races, TheTraceMarksBothAccesses) {
  auto run = testing::RunAndCheckTrace(Program(CopyInThen(false, LoadIntoAcc)), {Input()}, {},
                                       "race_marks");
  ExpectRace(run.result);
  std::vector<std::string> marks;
  for (const auto& e : traces::DecodePerfettoTrace(traces::ReadTraceFile(run.trace_path))) {
    if (e.type == traces::DecodedEvent::Type::kInstant && e.name.rfind("race: ", 0) == 0) {
      EXPECT_EQ(e.track, RaceChip(run.result.error) + "/races");
      marks.push_back(e.name);
    }
  }
  EXPECT_THAT(marks, ::testing::ElementsAre("race: DMA 'copy x -> buf' writing into it",
                                            "race: load of 'buf'"));
}

TEST(Races, TheCheckCanBeSwitchedOff) {
  RunOptions options;
  options.race_check = false;
  auto result = RunChecked(Program(CopyInThen(false, LoadIntoAcc)), "race_off", options);
  // The load ran before the copy landed: stale data, and nothing said so.
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_FALSE(CompareExact(result.outputs[0], Input()).equal);
}

// Chip 1 reads what chip 0 sends into its buf. Without waiting for the receive, the load
// is right only when the data happens to be there: chip 1 computes for long (it is slow)
// before it loads.
KernelFn ReadRemoteCopy(bool wait_recv) {
  return [=](Kernel& k, const Refs& r) {
    AsyncCopy copy = XToChip1Buf(k, r);
    if (k.device_id() == 0) {
      copy.start();
      copy.wait_send();
      XToOut(k, r);
      return;
    }
    if (wait_recv) copy.wait_recv();
    k.fill(r[kAcc], 0);  // long on a slow chip
    LoadIntoAcc(k, r);
    if (!wait_recv) copy.wait_recv();
    AccToOut(k, r);
  };
}

TEST(Races, ARemoteCopyThatLandsFirstOnlyByTimingIsStillARace) {
  const ShardMap program = Program(ReadRemoteCopy(false));
  // Timing luck: the data is right...
  auto lucky = RunChecked(program, "race_lucky_unchecked", SlowChip(1, false));
  ASSERT_TRUE(lucky.ok) << lucky.error;
  EXPECT_TRUE(CompareExact(lucky.device_outputs[0][1], Input().Slice({0, 0}, {8, 128})).equal);
  // ... but no wait orders the load after the copy.
  auto checked = RunChecked(program, "race_lucky", SlowChip(1));
  ExpectRace(checked);
  EXPECT_THAT(checked.error, HasSubstr("race on chip 1 (x=1)"));
  EXPECT_THAT(checked.error,
              HasSubstr("DMA 'remote copy x -> device 1 buf' (remote) writing into it, by chip 0"));
  EXPECT_THAT(checked.error, HasSubstr("then load of 'buf', by chip 1 (x=1)"));
}

TEST(Races, WaitingForTheRemoteCopyOrdersIt) {
  auto result = RunChecked(Program(ReadRemoteCopy(true)), "race_remote_fixed", SlowChip(1));
  ASSERT_TRUE(result.ok) << result.error;
}

// Chip 0 sends x into chip 1's buf twice; chip 1 adds up what it receives. The second copy
// may only start once chip 1 has read the first: chip 1 says so on the REGULAR semaphore.
// Without it the result is right only because chip 0 is slower than chip 1.
KernelFn SendTwice(bool capacity) {
  return [=](Kernel& k, const Refs& r) {
    AsyncCopy copy = XToChip1Buf(k, r);
    if (k.device_id() == 0) {
      for (int round = 0; round < 2; ++round) {
        if (round > 0) k.fill(r[kAcc], 0);  // long on a slow chip
        if (round > 0 && capacity) k.wait(r[kFree], 1);
        copy.start();
        copy.wait_send();
      }
      XToOut(k, r);
      return;
    }
    for (int round = 0; round < 2; ++round) {
      copy.wait_recv();
      if (round == 0) LoadIntoAcc(k, r);
      if (round == 1) k.add(r[kAcc], r[kAcc], r[kBuf]);
      if (round == 0 && capacity) k.signal(r[kFree], 1, DeviceId::Logical(0));
    }
    AccToOut(k, r);
  };
}

TEST(Races, ASenderThatIsSlowerOnlyByTimingIsStillARace) {
  const ShardMap program = Program(SendTwice(false));
  auto lucky = RunChecked(program, "race_send_twice_unchecked", SlowChip(0, false));
  ASSERT_TRUE(lucky.ok) << lucky.error;
  EXPECT_EQ(lucky.device_outputs[0][1].GetFlat(5), 2 * Input().GetFlat(5));
  auto checked = RunChecked(program, "race_send_twice", SlowChip(0));
  ExpectRace(checked);
  EXPECT_THAT(checked.error, HasSubstr("race on chip 1 (x=1)"));
  EXPECT_THAT(checked.error, HasSubstr("load of 'buf', by chip 1 (x=1)"));
  EXPECT_THAT(checked.error,
              HasSubstr("then DMA 'remote copy x -> device 1 buf' (remote) writing into it, by "
                        "chip 0 (x=0)"));
  EXPECT_THAT(checked.error, HasSubstr("capacity semaphore"));
}

TEST(Races, ACapacitySemaphoreOrdersTheSecondCopyAcrossChips) {
  auto result = RunChecked(Program(SendTwice(true)), "race_send_twice_fixed", SlowChip(0));
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.device_outputs[0][1].GetFlat(5), 2 * Input().GetFlat(5));
}

}  // namespace
}  // namespace tpusim
