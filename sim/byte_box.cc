#include "sim/byte_box.h"

#include <algorithm>

namespace tpusim::sim {

namespace {

// Where a box starts in the lattice its strides define: its index along each dimension and
// its byte within an element.
struct LatticePosition {
  static constexpr size_t kMaxDims = 8;
  uint64_t index[kMaxDims];
  uint64_t byte = 0;
};

// True when every byte of the box has one index per dimension: each dimension's extent,
// with everything inside it, fits within one step of the dimension outside it. Then the
// index digits of a byte are found by division, and two boxes on the same lattice share a
// byte exactly when their index ranges meet in every dimension.
bool PositionInLattice(const ByteBox& box, LatticePosition& at) {
  const size_t dims = box.counts.size();
  if (dims > LatticePosition::kMaxDims) return false;
  uint64_t rest = box.offset;
  for (size_t d = 0; d < dims; ++d) {
    if (box.strides[d] == 0) return false;
    at.index[d] = rest / box.strides[d];
    rest %= box.strides[d];
  }
  at.byte = rest;
  uint64_t inner = rest + box.element_bytes;  // one past the box's bytes within a step
  for (size_t d = dims; d-- > 0;) {
    uint64_t span = 0;
    if (inner > box.strides[d] ||
        __builtin_mul_overflow(at.index[d] + box.counts[d] - 1, box.strides[d], &span) ||
        __builtin_add_overflow(inner, span, &inner))
      return false;
  }
  return true;
}

bool RangesMeet(uint64_t a, uint64_t a_count, uint64_t b, uint64_t b_count) {
  return a < b + b_count && b < a + a_count;
}

// Sub-boxes of one array (the common case: blocks, rows or shares of one buffer) compared
// by their index ranges, without walking their runs. Returns false when it cannot tell.
bool CompareOnOneLattice(const ByteBox& a, const ByteBox& b, bool& overlap) {
  if (a.element_bytes != b.element_bytes || a.strides != b.strides) return false;
  LatticePosition pa, pb;
  if (!PositionInLattice(a, pa) || !PositionInLattice(b, pb)) return false;
  overlap = RangesMeet(pa.byte, a.element_bytes, pb.byte, b.element_bytes);
  for (size_t d = 0; overlap && d < a.counts.size(); ++d)
    overlap = RangesMeet(pa.index[d], a.counts[d], pb.index[d], b.counts[d]);
  return true;
}

}  // namespace

bool BoxesOverlap(const ByteBox& a, const ByteBox& b) {
  if (a.bytes() == 0 || b.bytes() == 0) return false;
  if (a.end() <= b.offset || b.end() <= a.offset) return false;
  if (BoxIsDense(a) && BoxIsDense(b)) return true;  // two ranges that meet
  if (bool overlap = false; CompareOnOneLattice(a, b, overlap)) return overlap;
  auto runs = [](const ByteBox& box) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    ForEachRun(box, [&](uint64_t offset, uint64_t run) { out.emplace_back(offset, offset + run); });
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
    return out;
  };
  const auto ra = runs(a), rb = runs(b);
  size_t i = 0, j = 0;
  while (i < ra.size() && j < rb.size()) {
    if (ra[i].second <= rb[j].first) {
      ++i;
    } else if (rb[j].second <= ra[i].first) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

BoxFootprint FootprintOf(const ByteBox& box, bool dense) {
  BoxFootprint f;
  f.start = box.offset;
  f.end = box.end();
  f.empty = box.bytes() == 0;
  f.dense = dense;
  const size_t dims = box.counts.size();
  LatticePosition at;
  if (f.empty || dims > BoxFootprint::kMaxDims || !PositionInLattice(box, at)) return f;
  constexpr uint64_t kMax = UINT32_MAX;
  // Byte ranges within an element are compared as byte + element_bytes: that sum fits too.
  if (at.byte + box.element_bytes > kMax) return f;
  for (size_t d = 0; d < dims; ++d) {
    // PositionInLattice checked that index + count - 1 does not overflow.
    if (at.index[d] + box.counts[d] > kMax) return f;
    f.first[d] = static_cast<uint32_t>(at.index[d]);
    f.last[d] = static_cast<uint32_t>(at.index[d] + box.counts[d]);
  }
  f.byte = static_cast<uint32_t>(at.byte);
  f.placed = true;
  return f;
}

bool BoxIsDense(const ByteBox& box) {
  uint64_t stride = box.element_bytes;
  for (size_t d = box.counts.size(); d-- > 0;) {
    if (box.counts[d] > 1 && box.strides[d] != stride) return false;
    stride *= box.counts[d];
  }
  return true;
}

uint64_t BoxOffsetAt(const ByteBox& box, uint64_t linear) {
  uint64_t element = linear / box.element_bytes;
  uint64_t offset = box.offset + linear % box.element_bytes;
  for (size_t d = box.counts.size(); d-- > 0;) {
    offset += element % box.counts[d] * box.strides[d];
    element /= box.counts[d];
  }
  return offset;
}

}  // namespace tpusim::sim
