// A DMA descriptor looks its semaphores up once, when it is made, if they are the call's own
// (dsl/kernel.h, AsyncCopy): those keep their handles for the whole kernel. A scoped
// semaphore is still looked up at every start and wait, so a wait after its scope ended is
// the misuse it always was, not a wait on whatever semaphore took its place.

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

// One chip: x in, out f32[8, 128] in HBM, VMEM scratch 'buf' of the same shape and a DMA
// semaphore 'sem'.
RunResult RunOneChip(KernelFn body) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::VMEM({8, 128}, DType::kF32, "buf"),
                         ScratchSpec::DMA({}, "sem")};
  PallasCall call = pallas_call("descriptors", std::move(body), grid, {{{8, 128}, DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  return testing::RunAndCheckTrace(program, {Array::Random({8, 128}, DType::kF32, 7)}, {},
                                   "descriptors")
      .result;
}

TEST(DescriptorSemaphores, ACallSemaphoreStaysTheDescriptorsWhileScopesComeAndGo) {
  const RunResult run = RunOneChip([](Kernel& k, const Refs& r) {
    const Ref &x = r[0], &out = r[1], &buf = r[2], &sem = r[3];
    AsyncCopy in = k.async_copy(x, buf, sem);
    in.start();
    // Scoped semaphores made and freed between the start and the wait: their bindings
    // come after the call's and move them in memory as they grow.
    std::vector<Ref> scoped;
    for (int i = 0; i < 16; ++i) {
      std::string name = "s";
      name += std::to_string(i);
      scoped.push_back(
          k.AllocateScoped(name, {}, DType::kInt32, MemorySpace::kSemaphore, SemaphoreType::kDma));
    }
    for (auto it = scoped.rbegin(); it != scoped.rend(); ++it)
      k.FreeScoped(*it);
    in.wait();
    AsyncCopy back = k.async_copy(buf, out, sem);
    back.start();
    back.wait();
  });
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_TRUE(CompareExact(run.outputs[0], Array::Random({8, 128}, DType::kF32, 7)).equal);
}

TEST(DescriptorSemaphores, AWaitOnAScopedSemaphoreAfterItsScopeEndedIsRefused) {
  const RunResult run = RunOneChip([](Kernel& k, const Refs& r) {
    const Ref &x = r[0], &buf = r[2];
    const Ref scoped =
        k.AllocateScoped("landed", {}, DType::kInt32, MemorySpace::kSemaphore, SemaphoreType::kDma);
    AsyncCopy in = k.async_copy(x, buf, scoped);
    in.start();
    in.wait();
    k.FreeScoped(scoped);
    in.wait();
  });
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error_kind, ErrorKind::kKernelMisuse) << run.error;
  EXPECT_THAT(run.error, HasSubstr("'landed' does not exist on device 0 yet or any more"));
}

TEST(DescriptorSemaphores, AStartOnAScopedSemaphoreAfterItsScopeEndedIsRefused) {
  const RunResult run = RunOneChip([](Kernel& k, const Refs& r) {
    const Ref &x = r[0], &buf = r[2];
    const Ref scoped =
        k.AllocateScoped("landed", {}, DType::kInt32, MemorySpace::kSemaphore, SemaphoreType::kDma);
    AsyncCopy in = k.async_copy(x, buf, scoped);
    k.FreeScoped(scoped);
    in.start();
    in.wait();
  });
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error_kind, ErrorKind::kKernelMisuse) << run.error;
  EXPECT_THAT(run.error, HasSubstr("'landed' does not exist on device 0 yet or any more"));
}

// The scoped slot a freed semaphore held goes to the next AllocateScoped: a wait on the old
// ref is refused, not a wait on the new semaphore.
TEST(DescriptorSemaphores, AWaitOnAFreedScopedSemaphoreWhoseSlotWasReusedIsRefused) {
  const RunResult run = RunOneChip([](Kernel& k, const Refs& r) {
    const Ref &x = r[0], &buf = r[2];
    const Ref first =
        k.AllocateScoped("first", {}, DType::kInt32, MemorySpace::kSemaphore, SemaphoreType::kDma);
    AsyncCopy in = k.async_copy(x, buf, first);
    in.start();
    in.wait();
    k.FreeScoped(first);
    const Ref second =
        k.AllocateScoped("second", {}, DType::kInt32, MemorySpace::kSemaphore, SemaphoreType::kDma);
    in.start();  // counts on 'first', which is gone, whatever now holds its slot
    in.wait();
    k.FreeScoped(second);
  });
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error_kind, ErrorKind::kKernelMisuse) << run.error;
  EXPECT_THAT(run.error, HasSubstr("'first' does not exist on device 0 yet or any more"));
}

// The same for a scoped buffer: a copy into a freed one whose slot another took is refused.
TEST(DescriptorSemaphores, ACopyIntoAFreedScopedBufferWhoseSlotWasReusedIsRefused) {
  const RunResult run = RunOneChip([](Kernel& k, const Refs& r) {
    const Ref &x = r[0], &sem = r[3];
    const Ref first =
        k.AllocateScoped("first", {8, 128}, DType::kF32, MemorySpace::kVmem, SemaphoreType::kDma);
    k.FreeScoped(first);
    const Ref second =
        k.AllocateScoped("second", {8, 128}, DType::kF32, MemorySpace::kVmem, SemaphoreType::kDma);
    AsyncCopy in = k.async_copy(x, first, sem);
    in.start();
    in.wait();
    k.FreeScoped(second);
  });
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error_kind, ErrorKind::kKernelMisuse) << run.error;
  EXPECT_THAT(run.error, HasSubstr("'first' does not exist on device 0 yet or any more"));
}

}  // namespace
}  // namespace tpusim
