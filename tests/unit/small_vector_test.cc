// sim/small_vector.h: the same elements, in the same order, as a std::vector given the same
// operations, inline and after it has moved to the heap.

#include "sim/small_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace tpusim::sim {
namespace {

struct Item {
  uint64_t a = 0;
  uint32_t b = 0;
  bool operator==(const Item&) const = default;
};

template <size_t N>
std::vector<Item> Contents(const SmallVector<Item, N>& v) {
  return std::vector<Item>(v.begin(), v.end());
}

TEST(SmallVectorTest, MatchesAVectorUnderRandomInsertsPushesAndFrontErases) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    SmallVector<Item, 4> small;
    std::vector<Item> expected;
    for (int op = 0; op < 60; ++op) {
      const Item item{rng(), static_cast<uint32_t>(op)};
      switch (rng() % 4) {
        case 0:
          small.push_back(item);
          expected.push_back(item);
          break;
        case 1: {
          const size_t at = expected.empty() ? 0 : rng() % (expected.size() + 1);
          small.insert(small.begin() + at, item);
          expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(at), item);
          break;
        }
        case 2: {
          const size_t n = expected.empty() ? 0 : rng() % (expected.size() + 1);
          small.erase_front(n);
          expected.erase(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(n));
          break;
        }
        default:
          if (rng() % 8 == 0) {
            small.clear();
            expected.clear();
          }
      }
      ASSERT_EQ(small.size(), expected.size());
      ASSERT_EQ(Contents(small), expected) << "round " << round << ", operation " << op;
    }
  }
}

TEST(SmallVectorTest, AMoveTakesTheElementsInlineOrOnTheHeapAndEmptiesTheSource) {
  for (size_t count : {size_t{3}, size_t{9}}) {  // inline, then past the 4 inline slots
    SmallVector<Item, 4> from;
    std::vector<Item> expected;
    for (size_t i = 0; i < count; ++i) {
      from.push_back(Item{i * 10, static_cast<uint32_t>(i)});
      expected.push_back(Item{i * 10, static_cast<uint32_t>(i)});
    }
    SmallVector<Item, 4> to(std::move(from));
    EXPECT_EQ(Contents(to), expected);
    EXPECT_TRUE(from.empty());   // NOLINT(bugprone-use-after-move): moved-from is empty
    from.push_back(Item{1, 1});  // and usable again
    const std::vector<Item> one = {Item{1, 1}};
    EXPECT_EQ(Contents(from), one);
    SmallVector<Item, 4> assigned;
    assigned = std::move(to);
    EXPECT_EQ(Contents(assigned), expected);
    EXPECT_TRUE(to.empty());  // NOLINT(bugprone-use-after-move)
  }
}

}  // namespace
}  // namespace tpusim::sim
