// BoxesOverlap against the definition: two boxes overlap when some byte is in both. The
// boxes are sub-blocks of small arrays (the shapes kernels slice), plus boxes on different
// lattices and with overlapping strides, so each of BoxesOverlap's ways of deciding is
// compared with a byte-by-byte answer; so are the answers FootprintsOverlap gives without
// the boxes.

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "sim/byte_box.h"

namespace tpusim::sim {
namespace {

std::set<uint64_t> BytesOf(const ByteBox& box) {
  std::set<uint64_t> bytes;
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    for (uint64_t i = 0; i < run; ++i)
      bytes.insert(offset + i);
  });
  return bytes;
}

bool ShareAByte(const ByteBox& a, const ByteBox& b) {
  const std::set<uint64_t> in_a = BytesOf(a);
  for (uint64_t byte : BytesOf(b))
    if (in_a.count(byte)) return true;
  return false;
}

// A random block of a row-major array of `shape` elements of `element_bytes`.
ByteBox BlockOf(std::mt19937& rng, const std::vector<uint64_t>& shape, uint32_t element_bytes) {
  ByteBox box;
  box.element_bytes = element_bytes;
  std::vector<uint64_t> strides(shape.size());
  uint64_t stride = element_bytes;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    const uint64_t start = std::uniform_int_distribution<uint64_t>(0, shape[d] - 1)(rng);
    const uint64_t count = std::uniform_int_distribution<uint64_t>(1, shape[d] - start)(rng);
    box.offset += start * strides[d];
    box.counts.push_back(count);
    box.strides.push_back(strides[d]);
  }
  return box;
}

TEST(BoxesOverlap, AgreesWithTheBytesOfBlocksOfOneArray) {
  std::mt19937 rng(7);
  // Up to six dimensions: the blocks of a 4-axis mesh's all-gather (TPU7x) have five.
  const std::vector<std::vector<uint64_t>> shapes = {
      {16}, {4, 6}, {3, 4, 5}, {2, 3, 2, 8}, {2, 3, 2, 2, 4}, {2, 2, 3, 2, 2, 3}};
  int overlapping = 0, apart = 0, told = 0;
  for (const auto& shape : shapes) {
    for (uint32_t element_bytes : {1u, 2u, 4u}) {
      for (int trial = 0; trial < 300; ++trial) {
        const ByteBox a = BlockOf(rng, shape, element_bytes);
        const ByteBox b = BlockOf(rng, shape, element_bytes);
        const bool expected = ShareAByte(a, b);
        ASSERT_EQ(BoxesOverlap(a, b), expected) << "trial " << trial;
        ASSERT_EQ(BoxesOverlap(b, a), expected) << "trial " << trial;
        (expected ? overlapping : apart) += 1;
        // Blocks of one array share its lattice: the footprints tell every pair.
        const int overlap =
            FootprintsOverlap(FootprintOf(a), FootprintOf(b), true, element_bytes, shape.size());
        ASSERT_EQ(overlap, expected ? 1 : 0) << "trial " << trial;
        ++told;
      }
    }
  }
  // Both answers occur often, so neither is right by default.
  EXPECT_GT(overlapping, 500);
  EXPECT_GT(apart, 500);
  EXPECT_EQ(told, overlapping + apart);
}

TEST(BoxesOverlap, AgreesWithTheBytesOfBoxesOnDifferentLattices) {
  // A column block of a 4x8 f32 matrix and the same bytes seen as a 32-element vector's
  // slices; and strides whose steps interleave (each element's row overlaps the next row).
  ByteBox column{8, {4, 2}, {32, 4}, 4};  // columns 2-3 of every row
  for (uint64_t start = 0; start < 32; ++start) {
    for (uint64_t count = 1; start + count <= 32; count += 3) {
      ByteBox run{start * 4, {count}, {4}, 4};
      const bool expected = ShareAByte(column, run);
      ASSERT_EQ(BoxesOverlap(column, run), expected) << start << "+" << count;
      // On two lattices the footprints tell only from the byte ranges, or not at all.
      const int overlap = FootprintsOverlap(FootprintOf(column), FootprintOf(run), false, 4, 2);
      ASSERT_TRUE(overlap < 0 || overlap == (expected ? 1 : 0)) << start << "+" << count;
    }
  }
  ByteBox interleaved{0, {3, 4}, {6, 2}, 2};  // rows 6 bytes apart, each 8 bytes long
  for (uint64_t offset = 0; offset < 24; ++offset) {
    ByteBox other{offset, {2, 2}, {5, 1}, 1};
    ASSERT_EQ(BoxesOverlap(interleaved, other), ShareAByte(interleaved, other)) << offset;
  }
}

}  // namespace
}  // namespace tpusim::sim
