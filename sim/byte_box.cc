#include "sim/byte_box.h"

#include <algorithm>

namespace tpusim::sim {

bool BoxesOverlap(const ByteBox& a, const ByteBox& b) {
  if (a.bytes() == 0 || b.bytes() == 0) return false;
  if (a.end() <= b.offset || b.end() <= a.offset) return false;
  auto runs = [](const ByteBox& box) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    ForEachRun(box, [&](uint64_t offset, uint64_t run) { out.emplace_back(offset, offset + run); });
    std::sort(out.begin(), out.end());
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
