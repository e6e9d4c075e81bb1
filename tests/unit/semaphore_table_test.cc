// A chip's table of semaphores (sim/semaphore_table.h): indices past the segments whose
// addresses it keeps inline reach the same semaphores as those before, a semaphore never moves
// while more are made, each starts on the cache line its first fields share, and the table
// knows which count bytes.

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/semaphore_table.h"

namespace tpusim::sim {
namespace {

TEST(SemaphoreTable, KeepsEverySemaphoreInPlaceAndInOrder) {
  SemaphoreTable table;
  std::vector<const Semaphore*> made;
  std::deque<std::string> names;  // a semaphore keeps its name by pointer (the slice's)
  // Past the inline segments, into the vector of further ones.
  const size_t count = SemaphoreTable::kSegment * (SemaphoreTable::kInline + 3) + 5;
  for (size_t i = 0; i < count; ++i) {
    std::string& name = names.emplace_back("s");  // += for GCC's -Wrestrict false positive
    name += std::to_string(i);
    Semaphore& s = table.emplace_back(&name, i % 2 ? SemaphoreKind::kDma : SemaphoreKind::kRegular);
    EXPECT_EQ(&s, &table.back());
    ASSERT_TRUE(s.Add(static_cast<int64_t>(i), nullptr));
    made.push_back(&s);
  }
  ASSERT_EQ(table.size(), count);
  size_t i = 0;
  for (const Semaphore& s : table) {
    ASSERT_LT(i, count);
    EXPECT_EQ(&s, made[i]) << "semaphore " << i << " moved";
    EXPECT_EQ(&table[i], made[i]);
    EXPECT_EQ(s.name().substr(1), std::to_string(i));
    EXPECT_EQ(s.value(), static_cast<int64_t>(i));
    EXPECT_EQ(s.kind(), i % 2 ? SemaphoreKind::kDma : SemaphoreKind::kRegular);
    // A DMA's check finds it by the table's record of kinds alone (FindDma).
    EXPECT_EQ(table.FindDma(i), i % 2 ? made[i] : nullptr) << "semaphore " << i;
    // Its first 32 bytes (value, wake amount, counter track, kind) within one 64-byte line.
    const auto at = reinterpret_cast<uintptr_t>(&s);
    EXPECT_EQ(at / 64, (at + 31) / 64) << "semaphore " << i << " straddles a line";
    ++i;
  }
  EXPECT_EQ(i, count);
  EXPECT_EQ(table.FindDma(count), nullptr) << "past the last one made";
  EXPECT_EQ(table.FindDma(~size_t{0}), nullptr);
}

TEST(SemaphoreTable, StartsEmpty) {
  const SemaphoreTable table;
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.begin() == table.end());
  EXPECT_EQ(table.FindDma(0), nullptr);
}

}  // namespace
}  // namespace tpusim::sim
