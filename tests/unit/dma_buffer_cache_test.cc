// What a DMA engine remembers of the buffers its DMAs name (sim/dma_buffer_cache.h): only for
// the very handle asked, and only while the slice has freed no buffer since.

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "sim/dma_buffer_cache.h"

namespace tpusim::sim {
namespace {

using base::MemorySpace;

TEST(DmaBufferCache, AnswersOnlyTheSameHandleWhileNothingWasFreed) {
  DmaBufferCache cache;
  const BufferHandle hbm{3, MemorySpace::kHbm, 2, 0};
  EXPECT_FALSE(cache.Find(hbm, 0).has_value()) << "nothing remembered yet";
  cache.Remember(hbm, 5, {4096, 0x1234});
  const std::optional<DmaBufferCache::Found> found = cache.Find(hbm, 5);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->size, 4096u);
  EXPECT_EQ(found->address, 0x1234u);
  EXPECT_FALSE(cache.Find(hbm, 6).has_value()) << "a buffer was freed since";
  // Each field of the handle tells buffers apart.
  for (const BufferHandle& other :
       {BufferHandle{4, MemorySpace::kHbm, 2, 0}, BufferHandle{3, MemorySpace::kVmem, 2, 0},
        BufferHandle{3, MemorySpace::kHbm, 3, 0}, BufferHandle{3, MemorySpace::kHbm, 2, 1}})
    EXPECT_FALSE(cache.Find(other, 5).has_value());
}

TEST(DmaBufferCache, ASetKeepsTheTwoBuffersUsedLast) {
  std::vector<BufferHandle> same;  // three buffers of one set
  const BufferHandle first{9, MemorySpace::kHbm, 0, 0};
  for (uint32_t index = 0; same.size() < 3; ++index) {
    const BufferHandle b{9, MemorySpace::kHbm, index, 0};
    if (DmaBufferCache::SetOf(b) == DmaBufferCache::SetOf(first)) same.push_back(b);
  }
  DmaBufferCache cache;
  cache.Remember(same[0], 0, {10, 100});
  cache.Remember(same[1], 0, {11, 110});
  ASSERT_TRUE(cache.Find(same[0], 0).has_value()) << "two fit in a set";
  cache.Remember(same[2], 0, {12, 120});  // takes the place of same[1], used longer ago
  ASSERT_TRUE(cache.Find(same[0], 0).has_value());
  EXPECT_EQ(cache.Find(same[0], 0)->size, 10u);
  EXPECT_FALSE(cache.Find(same[1], 0).has_value());
  ASSERT_TRUE(cache.Find(same[2], 0).has_value());
  EXPECT_EQ(cache.Find(same[2], 0)->address, 120u);
}

}  // namespace
}  // namespace tpusim::sim
