// The DMA engine's record of the semaphores it has checked (sim/dma_semaphore_cache.h): it
// gives back only what was remembered for the very handle asked, never another handle's
// semaphore, however many handles share its entries.

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/dma_semaphore_cache.h"

namespace tpusim::sim {
namespace {

TEST(DmaSemaphoreCache, FindsOnlyWhatWasRememberedForTheSameHandle) {
  DmaSemaphoreCache cache;
  std::deque<Semaphore> semaphores;
  std::deque<std::string> names;  // a semaphore keeps its name by pointer
  // Neighbours on a 16x20x28 torus and a step's worth of semaphore indices: far more handles
  // than entries, so entries are shared and replaced.
  std::map<std::pair<ChipId, uint32_t>, Semaphore*> remembered;
  for (ChipId chip : {0u, 1u, 15u, 16u, 20u, 320u, 8639u, 8959u}) {
    for (uint32_t index = 0; index < 40; ++index) {
      const SemaphoreHandle h{chip, index};
      EXPECT_EQ(cache.Find(h), nullptr) << "never remembered: " << chip << "/" << index;
      semaphores.emplace_back(
          &names.emplace_back(std::to_string(chip) + "/" + std::to_string(index)),
          SemaphoreKind::kDma);
      cache.Remember(h, semaphores.back());
      EXPECT_EQ(cache.Find(h), &semaphores.back()) << "just remembered";
      remembered[{chip, index}] = &semaphores.back();
    }
  }
  int found = 0;
  for (const auto& [key, semaphore] : remembered) {
    Semaphore* s = cache.Find({key.first, key.second});
    if (s == nullptr) continue;  // replaced by a handle sharing its entry
    EXPECT_EQ(s, semaphore) << key.first << "/" << key.second;
    ++found;
  }
  // Each entry keeps the last handle remembered there, and the hash spreads them over most.
  EXPECT_GT(found, 32);
  EXPECT_LE(found, static_cast<int>(DmaSemaphoreCache::kEntries));
}

TEST(DmaSemaphoreCache, ASetKeepsTheTwoHandlesUsedLast) {
  // Three handles of one set.
  std::vector<SemaphoreHandle> same;
  for (uint32_t index = 0; same.size() < 3; ++index) {
    const SemaphoreHandle h{7, index};
    if (DmaSemaphoreCache::SetOf(h) == DmaSemaphoreCache::SetOf({7, 0})) same.push_back(h);
  }
  std::deque<Semaphore> s;
  const std::string names[] = {"s0", "s1", "s2"};
  for (const std::string& name : names)
    s.emplace_back(&name, SemaphoreKind::kDma);
  DmaSemaphoreCache cache;
  cache.Remember(same[0], s[0]);
  cache.Remember(same[1], s[1]);
  EXPECT_EQ(cache.Find(same[0]), &s[0]) << "two fit in a set";
  // same[0] was used after same[1]: the third takes same[1]'s place.
  cache.Remember(same[2], s[2]);
  EXPECT_EQ(cache.Find(same[0]), &s[0]);
  EXPECT_EQ(cache.Find(same[1]), nullptr);
  EXPECT_EQ(cache.Find(same[2]), &s[2]);
}

TEST(DmaSemaphoreCache, AnEmptyEntryAnswersNoHandleEvenTheAllOnesOne) {
  DmaSemaphoreCache cache;
  EXPECT_EQ(cache.Find({~0u, ~0u}), nullptr);
  EXPECT_EQ(cache.Find({0, 0}), nullptr);
}

}  // namespace
}  // namespace tpusim::sim
