// A port's calendar (sim/port_calendar.h): it keeps its entries in order through growth and
// front erasures, goes back to its inline entries when it empties, and grows again onto the
// heap block it kept, with the same entries as a plain vector would hold.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/port_calendar.h"

namespace tpusim::sim {
namespace {

struct Entry {
  uint64_t start;
  uint64_t end;
};

void ExpectSame(const PortCalendar<Entry, 4>& calendar, const std::vector<Entry>& expected) {
  ASSERT_EQ(calendar.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(calendar[i].start, expected[i].start) << i;
    EXPECT_EQ(calendar[i].end, expected[i].end) << i;
  }
}

TEST(PortCalendar, MatchesAVectorThroughGrowthErasureAndEmptying) {
  PortCalendar<Entry, 4> calendar;
  std::vector<Entry> expected;
  for (int round = 0; round < 3; ++round) {
    // Inserted at the front, the back and the middle, past the inline entries.
    for (uint64_t i = 0; i < 13; ++i) {
      const size_t at = i % 3 == 0 ? 0 : i % 3 == 1 ? calendar.size() : calendar.size() / 2;
      const Entry e{100 * round + i, 100 * round + i + 1};
      calendar.insert(calendar.begin() + at, e);
      expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(at), e);
      ExpectSame(calendar, expected);
      EXPECT_GE(calendar.capacity(), calendar.size());
    }
    calendar.erase_front(5);
    expected.erase(expected.begin(), expected.begin() + 5);
    ExpectSame(calendar, expected);
    const Entry* heap = calendar.data();
    calendar.clear();
    expected.clear();
    EXPECT_EQ(calendar.size(), 0u);
    EXPECT_EQ(calendar.capacity(), 4u) << "empty, it is inline again";
    EXPECT_NE(calendar.data(), heap);
  }
}

TEST(PortCalendar, GrowsAgainOntoTheHeapBlockItKept) {
  PortCalendar<Entry, 4> calendar;
  for (uint64_t i = 0; i < 9; ++i)
    calendar.insert(calendar.end(), Entry{i, i + 1});
  const Entry* heap = calendar.data();
  const size_t capacity = calendar.capacity();
  calendar.clear();
  for (uint64_t i = 0; i < 5; ++i)
    calendar.insert(calendar.end(), Entry{i, i + 1});
  EXPECT_EQ(calendar.data(), heap) << "the kept block, not a new one";
  EXPECT_EQ(calendar.capacity(), capacity);
  for (uint64_t i = 0; i < 5; ++i)
    EXPECT_EQ(calendar[i].start, i);
}

}  // namespace
}  // namespace tpusim::sim
