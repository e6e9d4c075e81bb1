// The DMA engine's record of the semaphores it has checked (sim/dma_semaphore_cache.h): it
// gives back only what was remembered for the very pair of handles asked (a DMA's receive
// semaphore and its send one, or none), never another pair's semaphores, however many pairs
// share its entries.

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/dma_semaphore_cache.h"

namespace tpusim::sim {
namespace {

using Found = DmaSemaphoreCache::Found;

TEST(DmaSemaphoreCache, FindsOnlyWhatWasRememberedForTheSamePair) {
  DmaSemaphoreCache cache;
  std::deque<Semaphore> semaphores;
  std::deque<std::string> names;  // a semaphore keeps its name by pointer
  auto make = [&](const std::string& name) {
    return &semaphores.emplace_back(&names.emplace_back(name), SemaphoreKind::kDma);
  };
  // Neighbours on a 16x20x28 torus and a step's worth of semaphore indices: far more pairs
  // than entries, so entries are shared and replaced. Even indices pair with a send semaphore
  // on chip 3, odd ones with none.
  std::map<std::tuple<ChipId, uint32_t>, Found> remembered;
  for (ChipId chip : {0u, 1u, 15u, 16u, 20u, 320u, 8639u, 8959u}) {
    for (uint32_t index = 0; index < 40; ++index) {
      const SemaphoreHandle recv{chip, index};
      const SemaphoreHandle send_handle{3, index + 1};
      const SemaphoreHandle* send = index % 2 == 0 ? &send_handle : nullptr;
      EXPECT_EQ(cache.Find(recv, send), nullptr) << "never remembered: " << chip << "/" << index;
      const std::string name = std::to_string(chip) + "/" + std::to_string(index);
      const Found found{make(name), send ? make(name + " send") : nullptr};
      cache.Remember(recv, send, found);
      const Found* again = cache.Find(recv, send);
      ASSERT_NE(again, nullptr) << "just remembered";
      EXPECT_EQ(again->recv, found.recv);
      EXPECT_EQ(again->send, found.send);
      // The same receive handle with the other send is another pair.
      EXPECT_EQ(cache.Find(recv, send ? nullptr : &send_handle), nullptr);
      remembered[{chip, index}] = found;
    }
  }
  int found = 0;
  for (const auto& [key, semaphores] : remembered) {
    const auto [chip, index] = key;
    const SemaphoreHandle send_handle{3, index + 1};
    const Found* s = cache.Find({chip, index}, index % 2 == 0 ? &send_handle : nullptr);
    if (s == nullptr) continue;  // replaced by a pair sharing its entry
    EXPECT_EQ(s->recv, semaphores.recv) << chip << "/" << index;
    EXPECT_EQ(s->send, semaphores.send) << chip << "/" << index;
    ++found;
  }
  // Each entry keeps the last pair remembered there, and the hash spreads them over most.
  EXPECT_GT(found, 32);
  EXPECT_LE(found, static_cast<int>(DmaSemaphoreCache::kEntries));
}

TEST(DmaSemaphoreCache, ASetKeepsTheTwoPairsUsedLast) {
  // Three receive handles, without a send one, of one set.
  std::vector<SemaphoreHandle> same;
  for (uint32_t index = 0; same.size() < 3; ++index) {
    const SemaphoreHandle h{7, index};
    if (DmaSemaphoreCache::SetOf(h, nullptr) == DmaSemaphoreCache::SetOf({7, 0}, nullptr))
      same.push_back(h);
  }
  std::deque<Semaphore> s;
  const std::string names[] = {"s0", "s1", "s2"};
  for (const std::string& name : names)
    s.emplace_back(&name, SemaphoreKind::kDma);
  DmaSemaphoreCache cache;
  cache.Remember(same[0], nullptr, {&s[0], nullptr});
  cache.Remember(same[1], nullptr, {&s[1], nullptr});
  ASSERT_NE(cache.Find(same[0], nullptr), nullptr) << "two fit in a set";
  EXPECT_EQ(cache.Find(same[0], nullptr)->recv, &s[0]);
  // same[0] was used after same[1]: the third takes same[1]'s place.
  cache.Remember(same[2], nullptr, {&s[2], nullptr});
  ASSERT_NE(cache.Find(same[0], nullptr), nullptr);
  EXPECT_EQ(cache.Find(same[0], nullptr)->recv, &s[0]);
  EXPECT_EQ(cache.Find(same[1], nullptr), nullptr);
  ASSERT_NE(cache.Find(same[2], nullptr), nullptr);
  EXPECT_EQ(cache.Find(same[2], nullptr)->recv, &s[2]);
}

TEST(DmaSemaphoreCache, AnEmptyEntryAnswersNoPairEvenTheAllOnesOne) {
  DmaSemaphoreCache cache;
  const SemaphoreHandle ones{~0u, ~0u};
  EXPECT_EQ(cache.Find(ones, &ones), nullptr);
  EXPECT_EQ(cache.Find(ones, nullptr), nullptr);
  EXPECT_EQ(cache.Find({0, 0}, nullptr), nullptr);
}

}  // namespace
}  // namespace tpusim::sim
