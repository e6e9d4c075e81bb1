// Mistakes that used to end in someone else's words: a raw SystemC report (E549, E554), a
// semaphore overflow called a deadlock, a DeviceId's repeated axis called a race, a double
// FreeScoped blamed on a missing barrier, a memory model's 2.5 banks taken as 2, names and
// buffers silently ignored, and NaN results that did not say where the NaN came from.
// Each now has its own message naming the thing and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <thread>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Two chips; x and out are 256 f32 each, in HBM; a REGULAR semaphore, and VMEM scratch
// 'tmp' f32[256] and SMEM 'n' int32[1].
ShardMap Program(KernelFn body,
                 const config::Topology& topology = testing::MakeTopology({2}, {false})) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec()};
  grid.scratch_shapes = {ScratchSpec::REGULAR({}, "flag"),
                         ScratchSpec::VMEM({256}, DType::kF32, "tmp"),
                         ScratchSpec::SMEM({1}, DType::kInt32, "n")};
  PallasCall call = pallas_call("messages", std::move(body), grid, {{{256}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  return shard_map(Mesh(topology), {P{"x"}}, {P{"x"}}, call);
}

RunResult RunIt(const ShardMap& program) {
  return testing::RunAndCheckTrace(program, {Array::Iota({512}, DType::kF32)}, {}, "messages")
      .result;
}

void ExpectFailure(const RunResult& r, ErrorKind kind, const std::string& text) {
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, kind) << r.error;
  EXPECT_THAT(r.error, HasSubstr(text));
}

TEST(Messages, AKernelThatThrowsANonStandardExceptionSaysSo) {
  const auto r = RunIt(Program([](Kernel& k, const Refs&) {
    if (k.device_id() == 1) throw 42;
  }));
  ExpectFailure(r, ErrorKind::kKernelMisuse,
                "chip 1 (x=1): the kernel threw an exception that is not a std::exception");
  EXPECT_THAT(r.error, HasSubstr("Throw a std::exception such as std::runtime_error"));
}

TEST(Messages, ARunStartedFromInsideABodyIsRefused) {
  const ShardMap inner = Program([](Kernel&, const Refs&) {});
  const auto r = RunIt(Program([&inner](Kernel& k, const Refs&) {
    if (k.device_id() == 0) inner.Run({Array::Iota({512}, DType::kF32)}, {});
  }));
  ExpectFailure(r, ErrorKind::kKernelMisuse,
                "a run was started from inside a running kernel or program body");
  EXPECT_THAT(r.error, HasSubstr("Start the second run after the first returns"));
}

// SystemC has one simulation per process: runs from two host threads take turns, and each
// gives what it gives alone.
TEST(Messages, RunsFromTwoHostThreadsTakeTurnsAndAgree) {
  const ShardMap program = Program([](Kernel& k, const Refs& r) {
    k.signal(r[2], 1, DeviceId::Logical(1 - k.device_id()));
    k.wait(r[2], 1);
    k.fill(r[1], k.device_id() + 1);
  });
  const RunResult alone = program.Run({Array::Iota({512}, DType::kF32)}, {});
  ASSERT_TRUE(alone.ok) << alone.error;
  std::vector<RunResult> results(6);
  std::thread a([&] {
    for (int i = 0; i < 3; ++i)
      results[i] = program.Run({Array::Iota({512}, DType::kF32)}, {});
  });
  std::thread b([&] {
    for (int i = 3; i < 6; ++i)
      results[i] = program.Run({Array::Iota({512}, DType::kF32)}, {});
  });
  a.join();
  b.join();
  for (const RunResult& r : results) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.time(), alone.time());
    EXPECT_TRUE(CompareExact(r.outputs[0], alone.outputs[0]).equal);
  }
}

TEST(Messages, ASemaphoreSignalledPastItsRangeSaysSoNotDeadlock) {
  for (const bool remote : {false, true}) {
    SCOPED_TRACE(remote ? "remote" : "local");
    const auto r = RunIt(Program([remote](Kernel& k, const Refs& r) {
      if (k.device_id() != 0) return;
      for (int i = 0; i < 2; ++i) {
        if (remote) k.signal(r[2], kMax, DeviceId::Logical(1));
        if (!remote) k.signal(r[2], kMax);
      }
    }));
    ExpectFailure(r, ErrorKind::kSemaphoreMisuse,
                  std::string("REGULAR semaphore 'flag' on chip ") +
                      (remote ? "1 (x=1)" : "0 (x=0)") +
                      " would pass its largest value, 9223372036854775807: it holds "
                      "9223372036854775807 and signal from chip 0 (x=0) adds "
                      "9223372036854775807.");
    EXPECT_THAT(r.error, HasSubstr("Signal smaller increments"));
  }
}

TEST(Messages, ADeviceIdThatNamesAnAxisTwiceSaysSoNotRace) {
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
    if (k.device_id() == 0) k.signal(r[2], 1, {{"x", 1}, {"x", 0}});
  }));
  ExpectFailure(r, ErrorKind::kKernelMisuse,
                "device id {'x': 1, 'x': 0} names axis 'x' twice; give each axis once");
}

TEST(Messages, ADoubleFreeScopedSaysSoNotMissingBarrier) {
  const auto r = RunIt(Program([](Kernel& k, const Refs&) {
    const Ref buf = k.AllocateScoped("buf", {8}, DType::kF32, MemorySpace::kVmem);
    k.FreeScoped(buf);
    k.FreeScoped(buf);
  }));
  ExpectFailure(r, ErrorKind::kKernelMisuse, "scoped buffer 'buf' is freed twice on device ");
  EXPECT_THAT(r.error, ::testing::Not(HasSubstr("barrier")));
}

TEST(Messages, FreeScopedOfAScratchOperandIsRefused) {
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) { k.FreeScoped(r[3]); }));
  ExpectFailure(r, ErrorKind::kKernelMisuse, "FreeScoped('tmp'), but it is not a scoped buffer");
}

TEST(Messages, AScopedBufferNeverFreedIsNamedAtKernelExit) {
  const auto r = RunIt(Program([](Kernel& k, const Refs&) {
    k.AllocateScoped("leak", {8}, DType::kF32, MemorySpace::kVmem);
  }));
  ExpectFailure(r, ErrorKind::kKernelMisuse,
                "scoped buffer 'leak' (AllocateScoped) is still allocated when pallas_call "
                "'messages' ends on device ");
  EXPECT_THAT(r.error, HasSubstr("free it with FreeScoped before the kernel returns"));
}

TEST(Messages, RunScopedBuffersAreFreedByTheirScope) {
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
    run_scoped(k, [&](const Refs& s) { k.fill(s[0], 1); }, {ScratchSpec::VMEM({8}, DType::kF32)});
    k.fill(r[1], 0);
  }));
  EXPECT_TRUE(r.ok) << r.error;
}

TEST(Messages, AMemoryModelCountThatIsNotWholeIsRefused) {
  const auto topology = testing::MakeTopology({2}, {false}, [](config::Topology& t) {
    auto& hbm = *t.mutable_chip()->mutable_hbm();
    hbm.set_model("row_buffer");
    auto* banks = hbm.add_parameter();
    banks->set_name("banks");
    banks->set_value(2.5);
  });
  try {
    RunIt(Program([](Kernel&, const Refs&) {}, topology));
    FAIL() << "2.5 banks were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("sets 'banks' of timing model 'row_buffer' to 2.5; it must "
                                    "be a whole number from 1 to 4096 (banks)"));
  }
}

TEST(Messages, MoreInNamesThanInputsIsRefused) {
  GridSpec grid;
  PallasCall call = pallas_call("named", [](Kernel&, const Refs&) {}, grid, {{{8}, DType::kF32}});
  call.in_names = {"x", "y"};
  try {
    shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call).Run({Array({8}, DType::kF32)}, {});
    FAIL() << "an in_name for no input was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("named: in_names gives 2 names, but the call has 1 inputs "
                                    "(scalar-prefetch operands included); give at most one name "
                                    "per input."));
  }
}

TEST(Messages, ANanResultNamesTheBufferReadBeforeItWasWritten) {
  const ShardMap program = Program([](Kernel& k, const Refs& r) {
    k.store(r[1], k.load(r[3]));  // 'tmp' was never written
  });
  const auto r = RunIt(program);
  ASSERT_TRUE(r.ok) << r.error;
  const Comparison c = CheckAgainstReference(program, r, {Array({512}, DType::kF32)}, 0, 0);
  EXPECT_FALSE(c.equal);
  EXPECT_THAT(c.detail, HasSubstr("is nan, expected 0"));
  EXPECT_THAT(c.detail, HasSubstr("The run read memory that nothing had written, which reads as "
                                  "NaN (integers: the dtype's largest value): 'tmp f32[256]' in "
                                  "VMEM of chip 0 (x=0), 'tmp f32[256]' in VMEM of chip 1 (x=1)."));
}

TEST(Messages, AnOutOfMemoryRunNamesTheBufferReadBeforeItWasWritten) {
  const auto r = RunIt(Program([](Kernel& k, const Refs& r) {
    // 'n' was never written: it reads as int32's largest value, asked for as a size.
    const int64_t n = static_cast<int64_t>(k.load(r[4]).GetFlat(0));
    k.FreeScoped(k.AllocateScoped("rows", {n}, DType::kF32, MemorySpace::kVmem));
  }));
  ExpectFailure(r, ErrorKind::kCapacity, "is over capacity");
  EXPECT_THAT(r.error, HasSubstr("The run read memory that nothing had written"));
  EXPECT_THAT(r.error, HasSubstr("'n int32[1]' in SMEM of chip 0 (x=0)"));
}

// An f32 matmul at DEFAULT precision runs one bf16 pass, as the chip does: against an exact
// f32 reference it misses, and the mismatch says why and names the fix. At HIGHEST (six
// passes, still not exact to 1e-9) the mismatch has no such note.
TEST(Messages, AnF32MismatchFromOneBf16PassNamesPrecisionHighest) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  auto mismatch = [&](const char* dtype, const char* precision) {
    const kernels::ParamValues args = {
        {"m", 64}, {"k", 512}, {"n", 128}, {"dtype", dtype}, {"precision", precision}};
    kernels::Workload w = testing::Entry("matmul").make(mesh, testing::ParamsFor("matmul", args));
    const auto run = testing::RunWorkload(w);
    EXPECT_TRUE(run.result.ok) << run.result.error;
    // Tighter than any rounding of the operands allows.
    const Comparison c = CheckAgainstReference(w.program, run.result, w.expected, 0, 1e-9);
    EXPECT_FALSE(c.equal) << dtype << " " << precision;
    return c.detail;
  };
  EXPECT_THAT(mismatch("f32", "DEFAULT"),
              HasSubstr("The run's dots of f32 operands ran at DEFAULT precision: one bf16 pass, "
                        "as on the chip"));
  EXPECT_THAT(mismatch("f32", "DEFAULT"),
              HasSubstr("run them at precision HIGHEST (the entry's precision parameter"));
  EXPECT_THAT(mismatch("f32", "HIGHEST"), Not(HasSubstr("DEFAULT precision")));
}

}  // namespace
}  // namespace tpusim
