// base/inline_vector.h: the same elements, in the same order, as a std::vector given the same
// operations, inline and after it has moved to the heap; copies and moves independent of
// their source.

#include "base/inline_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace tpusim::base {
namespace {

using Small = InlineVector<uint64_t, 4>;

std::vector<uint64_t> Contents(const Small& v) {
  return std::vector<uint64_t>(v.begin(), v.end());
}

TEST(InlineVectorTest, MatchesAVectorUnderRandomOperations) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    Small small;
    std::vector<uint64_t> expected;
    for (int op = 0; op < 40; ++op) {
      switch (rng() % 7) {
        case 0:
        case 1:
        case 2: {
          const uint64_t value = rng();
          small.push_back(value);
          expected.push_back(value);
          break;
        }
        case 3: {
          const size_t count = rng() % 9;
          const uint64_t value = rng();
          small.assign(count, value);
          expected.assign(count, value);
          break;
        }
        case 4: {  // a copy, then the source changes: the copy keeps what it had
          Small copy = small;
          const std::vector<uint64_t> before = expected;
          small.push_back(1);
          EXPECT_EQ(Contents(copy), before);
          small = copy;
          EXPECT_EQ(Contents(small), before);
          break;
        }
        case 5: {  // moved out and back: the elements travel, the source is left empty
          Small moved = std::move(small);
          EXPECT_TRUE(small.empty());
          small = std::move(moved);
          EXPECT_TRUE(moved.empty());
          break;
        }
        case 6:
          small.clear();
          expected.clear();
          break;
      }
      ASSERT_EQ(Contents(small), expected) << "round " << round << ", op " << op;
      ASSERT_EQ(small.size(), expected.size());
    }
  }
}

TEST(InlineVectorTest, ComparesAndAssignsFromBraces) {
  Small a{1, 2, 3};
  Small b;
  b = {1, 2, 3};
  EXPECT_EQ(a, b);
  b.push_back(4);
  EXPECT_FALSE(a == b);
  b = {1, 2, 3, 4, 5, 6};  // past the inline four
  EXPECT_EQ(Contents(b), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(b.back(), 6u);
  a = b;
  EXPECT_EQ(a, b);
  b[0] = 9;
  EXPECT_EQ(a[0], 1u);  // a copy owns its own heap block
  b = {7};              // back to one element, in the heap block it already has
  EXPECT_EQ(Contents(b), (std::vector<uint64_t>{7}));
}

TEST(InlineVectorTest, AMoveIntoAVectorOnTheHeapKeepsTheInlineElements) {
  Small big{1, 2, 3, 4, 5};
  Small few{8, 9};
  big = std::move(few);
  EXPECT_EQ(Contents(big), (std::vector<uint64_t>{8, 9}));
  EXPECT_TRUE(few.empty());
  few.push_back(3);  // the moved-from vector is usable
  EXPECT_EQ(Contents(few), (std::vector<uint64_t>{3}));
}

}  // namespace
}  // namespace tpusim::base
