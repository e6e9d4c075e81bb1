// RaceDetector (sim/race_detector.h) on its own, driven as the core threads and the DMA
// dispatcher drive it: accesses that every core's clock has passed are retired, so a long
// kernel keeps a bounded number of them, and retirement drops nothing a later access could
// race: a race after thousands of retired accesses is still reported, and a chip that never
// synchronised with the owner still races the owner's oldest accesses.

#include <gtest/gtest.h>

#include <vector>

#include "sim/race_detector.h"

namespace tpusim::modules {
namespace {

using base::BufferHandle;
using base::ByteBox;
using base::ChipId;
using base::DmaRequest;
using base::MemorySpace;
using base::Region;
using base::SemaphoreHandle;
using sim::RaceDetector;

constexpr uint64_t kChunk = 64;      // bytes one DMA moves
constexpr uint64_t kChunks = 10000;  // DMAs per run: far more than the detector may keep

// Bytes [chunk * kChunk, (chunk + 1) * kChunk) of buffer `index` on `chip`.
Region Chunk(ChipId chip, MemorySpace space, uint32_t index, uint64_t chunk) {
  Region r;
  r.buffer = BufferHandle{chip, space, index};
  r.box.offset = chunk * kChunk;
  r.box.counts = {kChunk};
  r.box.strides = {1};
  r.box.element_bytes = 1;
  return r;
}

struct Harness {
  std::vector<RaceDetector::Race> races;
  RaceDetector detector{std::vector<uint32_t>(2, 1),
                        [this](const RaceDetector::Race& race) { races.push_back(race); }};

  // `issuer` copies chunk `chunk` of its HBM buffer 0 into `to`'s HBM buffer 1 (remote when
  // `to` differs), and the copy lands; `wait` makes the issuer (local) or `to` wait on the
  // receive semaphore, which orders the copy before what that core does next.
  void Copy(ChipId issuer, ChipId to, uint64_t chunk, bool wait) {
    DmaRequest request;
    request.source = Chunk(issuer, MemorySpace::kHbm, 0, chunk);
    request.destination = Chunk(to, MemorySpace::kHbm, 1, chunk);
    request.recv_semaphore = SemaphoreHandle{to, 0};
    request.label = "copy";
    const auto id = detector.StartDma(issuer, request, 0);
    detector.DmaSent(id, nullptr);
    detector.DmaLanded(id, request.recv_semaphore);
    if (wait) detector.Acquire(to, request.recv_semaphore);
  }
  // `from` signals a semaphore of `to`, which waits on it: `to` learns `from`'s clock.
  void Tell(ChipId from, ChipId to) {
    const SemaphoreHandle semaphore{to, 1};
    detector.SignalArrived(semaphore, detector.Release(from));
    detector.Acquire(to, semaphore);
  }
};

TEST(RaceRetirement, AccessesEveryCoreHasPassedAreRetired) {
  Harness h;
  for (uint64_t i = 0; i < kChunks; ++i) {
    h.Copy(0, 0, i, /*wait=*/true);
    h.Tell(0, 1);  // chip 1 learns of each copy's wait: nothing it does can race the copy
  }
  EXPECT_TRUE(h.races.empty());
  // Two accesses (source and destination) per copy: without retirement 2 * kChunks.
  EXPECT_LT(h.detector.live_accesses(), 1000u);
}

TEST(RaceRetirement, AChipThatNeverSynchronisedKeepsTheOwnersAccessesAlive) {
  Harness h;
  for (uint64_t i = 0; i < kChunks; ++i)
    h.Copy(0, 0, i, /*wait=*/true);
  EXPECT_TRUE(h.races.empty());
  // Chip 1 knows nothing of chip 0's copies, so it could still race any of them.
  EXPECT_EQ(h.detector.live_accesses(), 2 * kChunks);
  // ... and does: a remote copy into the bytes chip 0's first copy wrote.
  h.Copy(1, 0, 0, /*wait=*/false);
  ASSERT_EQ(h.races.size(), 1u);
  EXPECT_EQ(h.races[0].earlier.chip, 0u);
  EXPECT_EQ(h.races[0].later.chip, 1u);
}

TEST(RaceRetirement, ARaceAfterManyRetiredAccessesIsReported) {
  Harness h;
  for (uint64_t i = 0; i < kChunks; ++i) {
    h.Copy(0, 0, i, /*wait=*/true);
    h.Tell(0, 1);
  }
  ASSERT_TRUE(h.races.empty());
  // A copy into chunk 7 that nobody waits for, then a load of it: the race is reported.
  h.Copy(0, 0, 7, /*wait=*/false);
  h.detector.CoreAccess(0, Chunk(0, MemorySpace::kHbm, 1, 7), false, "load", 0);
  ASSERT_EQ(h.races.size(), 1u);
  EXPECT_EQ(h.races[0].later.what, "load");
  // ... and so is chip 1's remote copy into it, which no wait orders after the first.
  h.Copy(1, 0, 7, /*wait=*/false);
  EXPECT_EQ(h.races.size(), 2u);
}

}  // namespace
}  // namespace tpusim::modules
