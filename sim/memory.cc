#include "sim/memory.h"

#include <algorithm>
#include <cstring>

#include "base/errors.h"

namespace tpusim::sim {

namespace {

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

}  // namespace

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

Memory::Memory(std::string owner, MemorySpace space, uint64_t capacity, bool functional,
               std::unique_ptr<BandwidthPort> port)
    : owner_(std::move(owner)),
      space_(space),
      capacity_(capacity),
      functional_(functional),
      port_(std::move(port)) {}

uint32_t Memory::Allocate(uint64_t bytes, const std::string& label, Uninitialized fill) {
  if (allocated_ + bytes > capacity_) {
    std::string breakdown;
    for (const auto& b : buffers_) {
      if (b.live) breakdown += "\n    " + FormatBytes(b.size) + "  " + b.label;
    }
    breakdown += "\n    " + FormatBytes(bytes) + "  " + label + "  <- does not fit";
    throw Error(ErrorKind::kCapacity,
                std::string(MemorySpaceName(space_)) + " of " + owner_ +
                    " is over capacity: " + FormatBytes(allocated_ + bytes) + " requested, " +
                    FormatBytes(capacity_) + " available. Allocations:" + breakdown +
                    "\n  Use smaller blocks, fewer buffers, or fewer pipeline stages.");
  }
  allocated_ += bytes;
  buffers_.push_back(Buffer{label, bytes, true, fill, {}});
  return static_cast<uint32_t>(buffers_.size() - 1);
}

void Memory::Free(uint32_t index) {
  Buffer& buffer = buffers_[index];
  if (!buffer.live) return;
  buffer.live = false;
  allocated_ -= buffer.size;
  std::vector<uint8_t>().swap(buffer.bytes);
}

void Memory::FillUnwritten(const Buffer& buffer, uint64_t offset, uint64_t size, uint8_t* out) {
  const Uninitialized& f = buffer.fill;
  if (f.pattern == 0 || f.element_bytes == 0) {
    std::memset(out, 0, size);
    return;
  }
  for (uint64_t i = 0; i < size; ++i)
    out[i] = static_cast<uint8_t>(f.pattern >> (8 * ((offset + i) % f.element_bytes)));
}

std::vector<uint8_t>& Memory::Materialize(Buffer& buffer) {
  if (buffer.bytes.size() != buffer.size) {
    buffer.bytes.resize(buffer.size);
    FillUnwritten(buffer, 0, buffer.size, buffer.bytes.data());
  }
  return buffer.bytes;
}

void Memory::Gather(uint32_t index, const ByteBox& box, uint8_t* out) const {
  if (!functional_) return;
  const Buffer& buffer = buffers_[index];
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    if (buffer.bytes.empty()) {
      FillUnwritten(buffer, offset, run, out);
    } else {
      std::memcpy(out, buffer.bytes.data() + offset, run);
    }
    out += run;
  });
}

void Memory::Scatter(uint32_t index, const ByteBox& box, const uint8_t* in) {
  if (!functional_) return;
  auto& bytes = Materialize(buffers_[index]);
  ForEachRun(box, [&](uint64_t offset, uint64_t run) {
    std::memcpy(bytes.data() + offset, in, run);
    in += run;
  });
}

void Memory::WriteAll(uint32_t index, const void* data, uint64_t size) {
  if (!functional_) return;
  auto& bytes = Materialize(buffers_[index]);
  std::memcpy(bytes.data(), data, size);
}

std::vector<uint8_t> Memory::ReadAll(uint32_t index) const {
  const Buffer& buffer = buffers_[index];
  if (!buffer.bytes.empty() || !functional_) return buffer.bytes;
  std::vector<uint8_t> unwritten(buffer.size);
  FillUnwritten(buffer, 0, buffer.size, unwritten.data());
  return unwritten;
}

}  // namespace tpusim::sim
