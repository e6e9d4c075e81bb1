#pragma once

// Boxes of bytes (base::ByteBox): walking their contiguous runs, whether two overlap, and
// copying them out of and into a buffer's bytes.

#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/base_names.h"

namespace tpusim::sim {

// Walks every contiguous run of a box, innermost dimension merged when it is dense.
template <typename Visit>
void ForEachRun(const ByteBox& box, Visit visit) {
  const size_t dims = box.counts.size();
  if (dims == 0) {
    visit(box.offset, static_cast<uint64_t>(box.element_bytes));
    return;
  }
  const bool dense_inner = box.strides[dims - 1] == box.element_bytes;
  const size_t outer_dims = dense_inner ? dims - 1 : dims;
  const uint64_t run = dense_inner ? box.counts[dims - 1] * box.element_bytes : box.element_bytes;
  for (auto c : box.counts) {
    if (c == 0) return;
  }
  std::vector<uint64_t> index(outer_dims, 0);
  while (true) {
    uint64_t offset = box.offset;
    for (size_t i = 0; i < outer_dims; ++i)
      offset += index[i] * box.strides[i];
    visit(offset, run);
    size_t d = outer_dims;
    while (d > 0) {
      --d;
      if (++index[d] < box.counts[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (outer_dims == 0) return;
  }
}

// Whether two boxes of one buffer share a byte (exact for strided boxes, not just their
// bounding ranges: column blocks of one matrix do not overlap).
bool BoxesOverlap(const ByteBox& a, const ByteBox& b);

// What BoxesOverlap reads of a box, found once: a box compared with many others (the
// writers in flight into one buffer, sim/buffer_writers.h) then needs neither their
// ByteBoxes (on other DMAs' cold lines) nor the divisions that place each on its lattice.
struct BoxFootprint {
  // A 4-axis mesh's all-gather (TPU7x: x, y, z and the chip's two chiplets) writes blocks of
  // five dimensions; more than six fall back to BoxesOverlap.
  static constexpr size_t kMaxDims = 6;
  uint64_t start = 0;  // the bytes it spans: [start, end)
  uint64_t end = 0;
  // Where it lies in the lattice its strides define (BoxesOverlap's exact test for boxes on
  // one lattice): its index range [first, last) along each dimension and its byte within
  // an element. Set when `placed`.
  uint32_t first[kMaxDims] = {};
  uint32_t last[kMaxDims] = {};
  uint32_t byte = 0;
  bool empty = false;   // no bytes: it overlaps nothing
  bool dense = false;   // one contiguous run
  bool placed = false;  // the lattice position is found and every number fits 32 bits
};
// `dense` is BoxIsDense(box), which a DMA has found already (Transfer::destination_dense).
BoxFootprint FootprintOf(const ByteBox& box, bool dense);

// BoxesOverlap(a, b) for the boxes with footprints `fa` and `fb`, where it can tell from
// them: `one_lattice` says the boxes have the same strides and element bytes. Returns
// 1 (overlap), 0 (none), or -1 (ask BoxesOverlap).
inline int FootprintsOverlap(const BoxFootprint& fa, const BoxFootprint& fb, bool one_lattice,
                             uint32_t element_bytes, size_t dims) {
  if (fa.empty || fb.empty || fa.end <= fb.start || fb.end <= fa.start) return 0;
  if (fa.dense && fb.dense) return 1;
  if (!one_lattice || !fa.placed || !fb.placed) return -1;
  if (fa.byte >= fb.byte + element_bytes || fb.byte >= fa.byte + element_bytes) return 0;
  for (size_t d = 0; d < dims; ++d)
    if (fa.first[d] >= fb.last[d] || fb.first[d] >= fa.last[d]) return 0;
  return 1;
}

// Where the byte `linear` bytes into the box (in its element order) lies in the buffer.
uint64_t BoxOffsetAt(const ByteBox& box, uint64_t linear);
// Whether the box is one contiguous run (then byte `linear` is at offset + linear).
bool BoxIsDense(const ByteBox& box);
inline BoxFootprint FootprintOf(const ByteBox& box) {
  return FootprintOf(box, BoxIsDense(box));
}

// Copies the box out of / into a buffer whose bytes start at `base`.
inline void GatherBox(const uint8_t* base, const ByteBox& box, uint8_t* out) {
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    std::memcpy(out, base + offset, run);
    out += run;
  });
}
inline void ScatterBox(uint8_t* base, const ByteBox& box, const uint8_t* in) {
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    std::memcpy(base + offset, in, run);
    in += run;
  });
}

}  // namespace tpusim::sim
