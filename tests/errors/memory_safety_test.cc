// Memory safety: a kernel's slice, store, fill or named scope that once corrupted the heap,
// crashed or stored a wrong number silently now ends the run with a message naming the
// ref and the fix. Each case is a small program that must fail (or pass) as checked here.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "sim/simulation.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() - 4;

// Two chips; x and out are 1024 f32 each in HBM; scratch: a DMA semaphore, a VMEM
// buffer of 1024 f32 and an int32 VMEM buffer of 8.
ShardMap Program(KernelFn body) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "sem"), ScratchSpec::VMEM({1024}, DType::kF32, "buf"),
                         ScratchSpec::VMEM({8}, DType::kInt32, "ints")};
  PallasCall call = pallas_call("safety", std::move(body), grid, {{{1024}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  return shard_map(Mesh(testing::MakeTopology({2}, {false})), {P{"x"}}, {P{"x"}}, call);
}

RunResult RunIt(const ShardMap& program, RunOptions options = {}) {
  const std::vector<Array> inputs = {options.functional ? Array::Random({2048}, DType::kF32, 3)
                                                        : Array::Placeholder({2048}, DType::kF32)};
  return testing::RunAndCheckTrace(program, inputs, options, "safety").result;
}

void ExpectFailure(const RunResult& r, ErrorKind kind, const std::string& text) {
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, kind) << r.error;
  EXPECT_THAT(r.error, HasSubstr(text));
}

TEST(MemorySafety, SliceWhoseEndOverflowsIsOutOfBounds) {
  for (const char* use : {"store", "load", "dma in", "dma out"}) {
    SCOPED_TRACE(use);
    const std::string what = use;
    const auto r = RunIt(Program([what](Kernel& k, const Refs& r) {
      const Ref& buf = r[3];
      if (what == "store") k.store(buf.at(ds(kHuge, 8)), Array({8}, DType::kF32));
      if (what == "load") k.load(buf.at(ds(kHuge, 8)));
      if (what == "dma in") {
        auto copy = k.async_copy(r[0].at(ds(0, 8)), buf.at(ds(kHuge, 8)), r[2]);
        copy.start();
        copy.wait();
      }
      if (what == "dma out") {
        auto copy = k.async_copy(r[0].at(ds(kHuge, 8)), buf.at(ds(0, 8)), r[2]);
        copy.start();
        copy.wait();
      }
    }));
    ExpectFailure(r, ErrorKind::kOutOfBounds,
                  "is sliced out of bounds: dimension 0 has extent 1024");
    EXPECT_THAT(r.error, HasSubstr("starts at 9223372036854775803 with size 8, whose end "
                                   "does not fit in int64"));
    EXPECT_THAT(r.error, HasSubstr("Keep start >= 0 and start + size <= 1024."));
  }
}

TEST(MemorySafety, SliceBeyondTheEndByOneIsOutOfBounds) {
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) { k.load(r[3].at(ds(1020, 5))); }));
  ExpectFailure(r, ErrorKind::kOutOfBounds, "the slice covers [1020, 1025)");
}

// Interpret mode's uninitialized out-of-bounds reads read a slice far outside the ref as
// all uninitialized, on either side.
TEST(MemorySafety, FarOutOfBoundsReadIsUninitializedWhenAsked) {
  RunOptions options;
  options.out_of_bounds_reads = OutOfBoundsReads::kUninitialized;
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
                         const Array a = k.load(r[3].at(ds(kHuge - 100, 8)));
                         for (int64_t i = 0; i < a.size(); ++i) {
                           if (!std::isnan(a.GetFlat(i)))
                             throw std::runtime_error("read a number outside the ref");
                         }
                         const Array b = k.load(r[3].at(ds(-kHuge, 8)));
                         if (!std::isnan(b.GetFlat(0)))
                           throw std::runtime_error("read a number before the ref");
                       }),
                       options);
  EXPECT_TRUE(r.ok) << r.error;
}

TEST(MemorySafety, SliceOfAnOutOfBoundsViewWhoseOffsetOverflowsIsRefused) {
  RunOptions options;
  options.out_of_bounds_reads = OutOfBoundsReads::kUninitialized;
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
                         k.load(r[3].at(ds(kHuge - 100, 8)).at(ds(kHuge - 100, 8)));
                       }),
                       options);
  ExpectFailure(r, ErrorKind::kOutOfBounds, "does not fit in int64");
}

TEST(MemorySafety, StoreOfAPlaceholderInAFunctionalRunNamesTheRef) {
  const auto r = RunIt(Program(
      [](Kernel& k, const Refs& r) { k.store(r[3], Array::Placeholder({1024}, DType::kF32)); }));
  ExpectFailure(r, ErrorKind::kKernelMisuse, "a store into 'buf' of a placeholder");
  EXPECT_THAT(r.error, HasSubstr("has no data"));
}

TEST(MemorySafety, StoreOfAPlaceholderInATimingOnlyRunIsFine) {
  RunOptions options;
  options.functional = false;
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
                         k.store(r[3], Array::Placeholder({1024}, DType::kF32));
                       }),
                       options);
  EXPECT_TRUE(r.ok) << r.error;
}

// A NamedScope kept past its kernel (here in a static) does nothing when it finally ends.
TEST(MemorySafety, NamedScopeThatOutlivesItsRunIsHarmless) {
  static std::optional<NamedScope> kept;
  const auto r = RunIt(Program([](Kernel& k, const Refs&) {
    if (k.device_id() == 0) kept.emplace(k.named_scope("kept"));
  }));
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(kept.has_value());
  kept.reset();  // the run and its core are gone
  const auto again = RunIt(Program([](Kernel& k, const Refs&) {
    if (k.device_id() == 0) kept.emplace(k.named_scope("kept again"));
  }));
  EXPECT_TRUE(again.ok) << again.error;
}

// The model's own bounds check, under the DSL's: a box whose last byte wraps around the
// 64-bit address space (2^61 + 1 elements 8 bytes apart end at byte 4, modulo 2^64) is
// refused, as another front end on sim/ could make one.
TEST(MemorySafety, SimRejectsABoxThatWrapsAroundTheAddressSpace) {
  const base::ByteBox wrapping{0, {(uint64_t{1} << 61) + 1}, {8}, 4};
  for (const bool dma : {true, false}) {
    sim::Simulation system(testing::MakeTopology({1}, {false}), {});
    const base::BufferHandle source = system.Allocate(0, base::MemorySpace::kVmem, 4096, "x");
    const base::BufferHandle target = system.Allocate(0, base::MemorySpace::kVmem, 4096, "y");
    const base::SemaphoreHandle done = system.AddSemaphore(0, base::SemaphoreKind::kDma, "done");
    const auto outcome = system.Run([&](base::CorePort& core) {
      if (!dma) {
        std::vector<uint8_t> in(64);
        core.Store({target, wrapping}, in.data(), "store to 'y'");
        return;
      }
      base::DmaRequest request;
      request.source = {source, wrapping};
      request.destination = {target, wrapping};
      request.recv_semaphore = done;
      request.label = "wrapping";
      core.StartDma(request);
    });
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.error_kind, ErrorKind::kOutOfBounds) << outcome.error;
    EXPECT_THAT(outcome.error, HasSubstr("ends past the 64-bit address range of '"));
  }
}

struct BadFill {
  double value;
  const char* shown;
};

class FillOutOfRange : public ::testing::TestWithParam<BadFill> {};

TEST_P(FillOutOfRange, IntegerFillNamesTheRefTheValueAndTheRange) {
  const double value = GetParam().value;
  for (bool functional : {true, false}) {
    RunOptions options;
    options.functional = functional;
    const auto r =
        RunIt(Program([value](Kernel& k, const Refs& r) { k.fill(r[4], value); }), options);
    ExpectFailure(r, ErrorKind::kKernelMisuse,
                  std::string("a fill of 'ints' (int32) with ") + GetParam().shown);
    EXPECT_THAT(r.error, HasSubstr("int32 holds whole numbers from -2147483648 to 2147483647"));
  }
}

INSTANTIATE_TEST_SUITE_P(NanInfAndTooLarge, FillOutOfRange,
                         ::testing::Values(BadFill{std::nan(""), "nan"}, BadFill{1e300, "1e+300"},
                                           BadFill{-std::numeric_limits<double>::infinity(),
                                                   "-inf"},
                                           BadFill{2147483648.0, "2147483648"}));

TEST(MemorySafety, IntegerFillInRangeStoresTheValue) {
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
    k.fill(r[4], -2147483648.0);
    if (k.load(r[4]).GetFlat(7) != -2147483648.0) throw std::runtime_error("wrong fill");
    k.fill(r[4], 2.75);  // truncates toward zero, as a cast to int32 does
    if (k.load(r[4]).GetFlat(0) != 2) throw std::runtime_error("wrong fill");
  }));
  EXPECT_TRUE(r.ok) << r.error;
}

}  // namespace
}  // namespace tpusim
