// sim/buffer_writers.h against a plain list of the writers in flight: under random inserts
// (in address order, against it, at equal starts) and removals in any order, the
// candidates it offers for a box include every writer whose bytes meet the box, and only
// writers still in flight, in order of (start, id).

#include "sim/buffer_writers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace tpusim::sim {
namespace {

struct Span {
  uint64_t start = 0;
  uint64_t end = 0;
};

// The footprint of the dense box [start, end).
BoxFootprint Dense(uint64_t start, uint64_t end) {
  BoxFootprint f;
  f.start = start;
  f.end = end;
  f.dense = true;
  return f;
}

// A writer's name for the structure: its id, as a pointer it never dereferences.
const Transfer* Named(uint64_t id) {
  return reinterpret_cast<const Transfer*>(static_cast<uintptr_t>(id));
}

TEST(BufferWritersTest, OffersEveryOverlappingWriterAndNoLandedOne) {
  std::mt19937_64 rng(25);
  for (int round = 0; round < 100; ++round) {
    BufferWriters writers;
    std::map<uint64_t, Span> live;  // by id
    uint64_t next_id = 0;
    const int pattern = round % 3;  // ascending, descending, or random starts
    for (int op = 0; op < 400; ++op) {
      if (live.empty() || rng() % 5 < 3) {
        const uint64_t id = ++next_id;
        const uint64_t start = pattern == 0   ? id * 8 + rng() % 16
                               : pattern == 1 ? 100000 - id * 8
                                              : rng() % 2048;
        const Span span{start, start + 1 + rng() % 64};
        writers.Insert(Dense(span.start, span.end), id, Named(id));
        live[id] = span;
      } else {
        // Lands: the oldest mostly, any one sometimes.
        auto it = live.begin();
        if (rng() % 3 == 0) std::advance(it, static_cast<long>(rng() % live.size()));
        writers.Remove(it->second.start, it->first);
        live.erase(it);
      }
      ASSERT_EQ(writers.size(), live.size());
      const uint64_t qstart = rng() % 2048 + (pattern == 1 ? 100000 - next_id * 8 : 0);
      const uint64_t qend = qstart + 1 + rng() % 128;
      std::vector<uint64_t> offered;
      uint64_t last_start = 0, last_id = 0;
      writers.ForEachCandidate(qstart, qend, [&](const BufferWriters::Entry& e) {
        const uint64_t id = reinterpret_cast<uintptr_t>(e.writer);
        ASSERT_TRUE(live.count(id)) << "writer " << id << " was removed";
        // In order of (start, id).
        EXPECT_TRUE(live[id].start > last_start || (live[id].start == last_start && id > last_id))
            << "writer " << id << " at " << live[id].start << " after writer " << last_id << " at "
            << last_start;
        last_start = live[id].start;
        last_id = id;
        offered.push_back(id);
      });
      for (const auto& [id, span] : live) {
        if (span.start < qend && qstart < span.end) {
          EXPECT_NE(std::find(offered.begin(), offered.end(), id), offered.end())
              << "round " << round << " op " << op << ": writer " << id << " [" << span.start
              << ", " << span.end << ") meets [" << qstart << ", " << qend
              << ") but was not offered";
        }
      }
    }
  }
}

TEST(BufferWritersTest, RemovingAWriterTwiceOrOneNeverAddedChangesNothing) {
  BufferWriters writers;
  writers.Insert(Dense(0, 64), 1, Named(1));
  writers.Insert(Dense(64, 128), 2, Named(2));
  writers.Remove(64, 2);
  writers.Remove(64, 2);
  writers.Remove(0, 7);
  EXPECT_EQ(writers.size(), 1u);
  int offered = 0;
  writers.ForEachCandidate(0, 128, [&](const BufferWriters::Entry& e) {
    EXPECT_EQ(e.writer, Named(1));
    ++offered;
  });
  EXPECT_EQ(offered, 1);
}

TEST(BufferWritersTest, PlacesBoxesOfUpToSixDimensionsOnTheWritersLattice) {
  // A 4-axis mesh's all-gather block: five dimensions of a row-major 2x2x3x2x8 array of
  // 2-byte elements.
  const ByteBox block{0, {1, 2, 1, 2, 8}, {192, 96, 32, 16, 2}, 2};
  BufferWriters writers;
  const BoxFootprint first = writers.Footprint(block, BoxIsDense(block));
  EXPECT_TRUE(first.placed);
  writers.Insert(first, 1, Named(1));
  ByteBox next = block;
  next.offset = 32;  // the same block one step along the third dimension
  const BoxFootprint second = writers.Footprint(next, BoxIsDense(next));
  ASSERT_TRUE(second.placed);
  EXPECT_EQ(FootprintsOverlap(first, second, true, writers.element_bytes(), writers.dims()), 0);
  // A box on other strides, or of seven dimensions, is not placed: BoxesOverlap tells.
  const ByteBox other{0, {4, 8}, {48, 2}, 2};
  EXPECT_FALSE(writers.Footprint(other, BoxIsDense(other)).placed);
  const ByteBox seven{0, {1, 1, 1, 1, 1, 1, 2}, {64, 64, 64, 64, 64, 64, 2}, 2};
  EXPECT_FALSE(writers.Footprint(seven, BoxIsDense(seven)).placed);
}

TEST(BufferWritersTest, ALatticeWithAStrideBeyond32BitsPlacesNoBox) {
  const uint64_t row = uint64_t{1} << 33;  // rows of 8 GiB
  const ByteBox first{0, {1, 64}, {row, 2}, 2};
  BufferWriters writers;
  writers.Insert(writers.Footprint(first, BoxIsDense(first)), 1, Named(1));
  const ByteBox second{row, {1, 64}, {row, 2}, 2};
  EXPECT_FALSE(writers.Footprint(second, BoxIsDense(second)).placed);
}

}  // namespace
}  // namespace tpusim::sim
