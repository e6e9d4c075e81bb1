// Misuse of scalar prefetch, input_output_aliases and CompilerParams: each message names
// the call, the operands and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "traces/trace_checker.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A ring of `chips` (one chip: no wraparound).
Mesh Ring(int chips) {
  return Mesh(testing::MakeTopology({chips}, {chips > 1}));
}

PallasCall Noop(std::vector<ShapeDtype> out, InputOutputAliases aliases = {}) {
  return pallas_call(
      "noop", [](Kernel&, const Refs&) {}, GridSpec{}, std::move(out), {}, std::move(aliases));
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PallasApiErrors, BarrierSemaphoreWithoutCollectiveId) {
  const Mesh mesh = Ring(2);
  PallasCall call =
      pallas_call("meet", [](Kernel& k, const Refs&) { k.wait(k.barrier_semaphore(), 0); },
                  GridSpec{}, {{{8}, DType::kF32}});
  const auto run = shard_map(mesh, {P{"x"}}, {P{"x"}}, call).Run({Array({16}, DType::kF32)}, {});
  ASSERT_FALSE(run.ok);
  EXPECT_EQ(run.error_kind, ErrorKind::kKernelMisuse);
  EXPECT_THAT(run.error, HasSubstr("pallas_call 'meet' uses barrier_semaphore() but sets no "
                                   "collective_id"));
  EXPECT_THAT(run.error, HasSubstr("pltpu.CompilerParams(collective_id=...)"));
}

TEST(PallasApiErrors, AliasedPairOfDifferentTypesNamesBoth) {
  const std::string error = ErrorOf([] {
    shard_map(Ring(1), {P{}}, {P{}}, Noop({{{8, 128}, DType::kBF16}}, {{0, 0}}))
        .Run({Array({8, 128}, DType::kF32)}, {});
  });
  EXPECT_THAT(error, HasSubstr("input_output_aliases {0: 0} makes output 0 (bf16[8,128]) the "
                               "buffer of input 0 (f32[8,128])"));
  EXPECT_THAT(error, HasSubstr("same shape and dtype"));
}

TEST(PallasApiErrors, AliasNamingAMissingOperand) {
  const std::string error = ErrorOf([] {
    shard_map(Ring(1), {P{}}, {P{}}, Noop({{{8}, DType::kF32}}, {{2, 0}}));
  });
  EXPECT_THAT(error, HasSubstr("input_output_aliases {2: 0} names input 2, but the call has 1 "
                               "inputs"));
}

TEST(PallasApiErrors, UsingADonatedValueNamesTheOpAndTheCall) {
  auto program =
      shard_map(Ring(1), {P{}}, {P{}}, [](ProgramContext& ctx, const std::vector<Value>& in) {
        ctx.pallas_call(Noop({{{8}, DType::kF32}}, {{0, 0}}), {in[0]});
        return std::vector<Value>{ctx.relu(in[0])};
      });
  const auto run = program.Run({Array({8}, DType::kF32)}, {});
  ASSERT_FALSE(run.ok);
  EXPECT_THAT(run.error, HasSubstr("operand 0 (f32[8]) was donated to 'pallas_call noop'"));
  EXPECT_THAT(run.error, HasSubstr("Use the output instead"));
}

// A call that writes x in place while an async all_gather still reads x races with it
// (issue 14: programs get the race checks where their steps touch HBM a DMA still moves).
// A call that takes simulated time: it fills a VMEM scratch.
PallasCall Busy() {
  GridSpec grid;
  grid.scratch_shapes = {ScratchSpec::VMEM({64, 128}, DType::kF32, "tmp")};
  return pallas_call("busy", [](Kernel& k, const Refs& r) { k.fill(r[2], 1); }, grid,
                     {{{8}, DType::kF32}});
}

// `busy`: a call that takes time runs between the start and the in-place write.
ShardMap GatherThenWriteInPlaceProgram(bool done_first, bool busy = false) {
  return shard_map(
      Ring(2), {P{"x"}}, {P{}, P{"x"}},
      [done_first, busy](ProgramContext& ctx, const std::vector<Value>& in) {
        AsyncValues gather = ctx.all_gather_start(in[0], "x", 0, /*tiled=*/true);
        Value gathered;
        if (done_first) gathered = ctx.all_gather_done(gather);
        if (busy) ctx.pallas_call(Busy(), {in[0]});
        Value written = ctx.pallas_call(Noop({{{8}, DType::kF32}}, {{0, 0}}), {in[0]})[0];
        if (!done_first) gathered = ctx.all_gather_done(gather);
        return std::vector<Value>{gathered, written};
      });
}

RunResult GatherThenWriteInPlace(bool done_first) {
  return GatherThenWriteInPlaceProgram(done_first).Run({Array::Random({16}, DType::kF32, 3)}, {});
}

TEST(PallasApiErrors, WritingInPlaceWhatAnAsyncCollectiveReadsIsARace) {
  const RunResult race = GatherThenWriteInPlace(false);
  ASSERT_FALSE(race.ok);
  EXPECT_EQ(race.error_kind, ErrorKind::kRace);
  EXPECT_THAT(race.error, HasSubstr("'pallas_call noop' (step 1) writes its input 0 (f32[8]) in "
                                    "place through input_output_aliases, but the async "
                                    "'all_gather x' started at step 0 still reads that buffer"));
  EXPECT_THAT(race.error, HasSubstr("Call its *_done before this call"));
  // The done that orders them fixes it.
  const RunResult fixed = GatherThenWriteInPlace(true);
  EXPECT_TRUE(fixed.ok) << fixed.error;
}

// The report reads as the model's race reports do (sim/race_detector.cc RaceMessage): the
// chip with its coordinates, both accesses with their steps and simulated times, the fix;
// and the trace marks both on the chip's races track, in functional and timing-only runs.
TEST(PallasApiErrors, TheInPlaceRaceReportNamesTheChipTimesAndStepsAndMarksTheTrace) {
  for (const bool functional : {true, false}) {
    RunOptions options;
    options.functional = functional;
    const auto run = testing::RunAndCheckTrace(GatherThenWriteInPlaceProgram(false, true),
                                               {Array::Random({16}, DType::kF32, 3)}, options,
                                               functional ? "inplace_race" : "inplace_race_timing");
    ASSERT_FALSE(run.result.ok);
    const std::string& error = run.result.error;
    EXPECT_EQ(run.result.error_kind, ErrorKind::kRace);
    // Either chip may meet it first.
    const std::string chip =
        error.rfind("race on chip 0", 0) == 0 ? "chip 0 (x=0)" : "chip 1 (x=1)";
    EXPECT_THAT(error, HasSubstr("race on " + chip +
                                 ", HBM buffer 'in0 f32[8]': the async "
                                 "'all_gather x' reading f32[8], by " +
                                 chip + " at 0.000 ns in step 0 ('all_gather x', not done yet)"));
    EXPECT_THAT(
        error, HasSubstr("; then 'pallas_call noop' writing f32[8] in place, by " + chip + " at "));
    EXPECT_THAT(error, HasSubstr(" ns in step 2 ('pallas_call noop')"));
    EXPECT_THAT(error, Not(HasSubstr("at 0.000 ns in step 2")));  // after the busy call
    EXPECT_THAT(error, HasSubstr("Call its *_done before this call"));
    std::vector<std::string> marks;
    for (const auto& e : traces::DecodePerfettoTrace(traces::ReadTraceFile(run.trace_path))) {
      if (e.type != traces::DecodedEvent::Type::kInstant || e.name.rfind("race: ", 0) != 0)
        continue;
      EXPECT_EQ(e.track, chip + "/races");
      marks.push_back(e.name);
    }
    EXPECT_THAT(marks, ElementsAre("race: the async 'all_gather x' reading f32[8]",
                                   "race: 'pallas_call noop' writing f32[8] in place"));
  }
}

TEST(PallasApiErrors, APlaceholderScalarOperandIsRejectedWithTheFix) {
  GridSpec grid;
  const PallasCall call = pallas_call("gather", [](Kernel&, const Refs&) {},
                                      PrefetchScalarGridSpec(1, grid), {{{8}, DType::kF32}});
  RunOptions timing;
  timing.functional = false;
  const std::string error = ErrorOf([&] {
    shard_map(Ring(1), {P{}, P{}}, {P{}}, call)
        .Run({Array::Placeholder({4}, DType::kInt32), Array::Placeholder({8}, DType::kF32)},
             timing);
  });
  EXPECT_THAT(error, HasSubstr("scalar-prefetch input in0 is a placeholder without data"));
}

TEST(PallasApiErrors, TooManyScalarOperands) {
  const std::string error = ErrorOf([] {
    shard_map(Ring(1), {P{}}, {P{}},
              pallas_call("k", [](Kernel&, const Refs&) {}, PrefetchScalarGridSpec(2, GridSpec{}),
                          {{{8}, DType::kF32}}));
  });
  EXPECT_THAT(error, HasSubstr("num_scalar_prefetch is 2, but the call has 1 inputs"));
}

TEST(PallasApiErrors, MisspelledDimensionSemantics) {
  const std::string error = ErrorOf([] {
    shard_map(Ring(1), {P{}}, {P{}},
              pallas_call(
                  "k", [](Kernel&, const Refs&) {}, GridSpec{}, {{{8}, DType::kF32}},
                  CompilerParams{.dimension_semantics = {"paralel"}}));
  });
  EXPECT_THAT(error, HasSubstr("dimension_semantics 'paralel' is none of \"parallel\", "
                               "\"core_parallel\" and \"arbitrary\"."));
}

}  // namespace
}  // namespace tpusim
