// base/inline_vector.h: the same elements, in the same order, as a std::vector given the same
// operations, inline and after it has moved to the heap; copies and moves independent of
// their source.

#include "base/inline_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
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
      switch (rng() % 8) {
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
        case 7: {  // resized, inline or onto the heap, then the new elements written
          const size_t count = rng() % 9;
          const size_t kept = std::min(count, expected.size());
          small.resize_for_overwrite(count);
          expected.resize(count);
          for (size_t i = kept; i < count; ++i) {
            expected[i] = rng();
            small.data()[i] = expected[i];
          }
          break;
        }
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

// Elements of several fields, inserted anywhere and erased from the front, as a port's
// calendar is.
struct Item {
  uint64_t a = 0;
  uint32_t b = 0;
  bool operator==(const Item&) const = default;
};

template <size_t N>
std::vector<Item> ItemsOf(const InlineVector<Item, N>& v) {
  return std::vector<Item>(v.begin(), v.end());
}

TEST(InlineVectorTest, MatchesAVectorUnderRandomInsertsPushesAndFrontErases) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    InlineVector<Item, 4> small;
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
      ASSERT_EQ(ItemsOf(small), expected) << "round " << round << ", operation " << op;
    }
  }
}

TEST(InlineVectorTest, AMoveTakesTheElementsInlineOrOnTheHeapAndEmptiesTheSource) {
  for (size_t count : {size_t{3}, size_t{9}}) {  // inline, then past the 4 inline slots
    InlineVector<Item, 4> from;
    std::vector<Item> expected;
    for (size_t i = 0; i < count; ++i) {
      from.push_back(Item{i * 10, static_cast<uint32_t>(i)});
      expected.push_back(Item{i * 10, static_cast<uint32_t>(i)});
    }
    InlineVector<Item, 4> to(std::move(from));
    EXPECT_EQ(ItemsOf(to), expected);
    EXPECT_TRUE(from.empty());   // NOLINT(bugprone-use-after-move): moved-from is empty
    from.push_back(Item{1, 1});  // and usable again
    const std::vector<Item> one = {Item{1, 1}};
    EXPECT_EQ(ItemsOf(from), one);
    InlineVector<Item, 4> assigned;
    assigned = std::move(to);
    EXPECT_EQ(ItemsOf(assigned), expected);
    EXPECT_TRUE(to.empty());  // NOLINT(bugprone-use-after-move)
  }
}

// Copies between inline vectors take the whole inline array: the copy must still hold
// exactly the source's elements, not the stale ones past its size (left by erase_front and
// clear), and a copy into a vector on the heap must keep working there.
TEST(InlineVectorTest, ACopyHoldsOnlyTheSourceElementsWhateverLiesPastThem) {
  Small source = {1, 2, 3, 4};
  source.erase_front(2);  // 3, 4 — with 3, 4 still stored past them
  const Small copy(source);
  EXPECT_EQ(Contents(copy), (std::vector<uint64_t>{3, 4}));
  Small assigned = {9, 9, 9, 9};
  assigned = source;
  EXPECT_EQ(Contents(assigned), (std::vector<uint64_t>{3, 4}));
  assigned.push_back(5);  // the slots past the copied size are free for new elements
  EXPECT_EQ(Contents(assigned), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(Contents(source), (std::vector<uint64_t>{3, 4}));  // the source is untouched
  source.clear();
  assigned = source;
  EXPECT_TRUE(assigned.empty());

  Small on_heap = {1, 2, 3, 4, 5, 6};  // past the four inline slots
  on_heap = Small{7, 8};
  EXPECT_EQ(Contents(on_heap), (std::vector<uint64_t>{7, 8}));
  const Small small = {10};
  on_heap = small;
  EXPECT_EQ(Contents(on_heap), (std::vector<uint64_t>{10}));
  for (uint64_t i = 0; i < 6; ++i)
    on_heap.push_back(i);  // grows on its own block again
  EXPECT_EQ(on_heap.size(), 7u);
  EXPECT_EQ(on_heap.back(), 5u);
  const Small heap_copy(on_heap);
  EXPECT_EQ(Contents(heap_copy), Contents(on_heap));
}

}  // namespace
}  // namespace tpusim::base
