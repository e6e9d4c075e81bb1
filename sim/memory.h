#pragma once

// One memory of one chip (HBM, VMEM or SMEM): named allocations against a capacity, and
// their bytes. Payloads are allocated on first write, so a 16 GiB HBM costs only what a
// run touches, and not at all in timing-only mode.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/bandwidth_port.h"
#include "sim/base_names.h"

namespace tpusim::sim {

// Whether two boxes of one buffer share a byte (exact for strided boxes, not just their
// bounding ranges: column blocks of one matrix do not overlap).
bool BoxesOverlap(const ByteBox& a, const ByteBox& b);

class Memory {
 public:
  Memory(std::string owner, MemorySpace space, uint64_t capacity, bool functional,
         std::unique_ptr<BandwidthPort> port);

  MemorySpace space() const { return space_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t allocated() const { return allocated_; }
  BandwidthPort& port() { return *port_; }

  // Throws Error(kCapacity) listing every live allocation when `bytes` does not fit.
  uint32_t Allocate(uint64_t bytes, const std::string& label, Uninitialized fill = {});
  void Free(uint32_t index);
  bool Live(uint32_t index) const { return index < buffers_.size() && buffers_[index].live; }
  uint64_t Size(uint32_t index) const { return buffers_[index].size; }
  const std::string& Label(uint32_t index) const { return buffers_[index].label; }

  // Copies the box out of / into the buffer. No-ops in timing-only mode.
  void Gather(uint32_t index, const ByteBox& box, uint8_t* out) const;
  void Scatter(uint32_t index, const ByteBox& box, const uint8_t* in);
  void WriteAll(uint32_t index, const void* data, uint64_t size);
  std::vector<uint8_t> ReadAll(uint32_t index) const;

 private:
  struct Buffer {
    std::string label;
    uint64_t size = 0;
    bool live = true;
    Uninitialized fill;
    std::vector<uint8_t> bytes;  // empty until written
  };
  // Unwritten bytes [offset, offset + size) of `buffer`, as its fill pattern says.
  static void FillUnwritten(const Buffer& buffer, uint64_t offset, uint64_t size, uint8_t* out);
  std::vector<uint8_t>& Materialize(Buffer& buffer);

  std::string owner_;
  MemorySpace space_;
  uint64_t capacity_;
  bool functional_;
  uint64_t allocated_ = 0;
  std::vector<Buffer> buffers_;
  std::unique_ptr<BandwidthPort> port_;
};

}  // namespace tpusim::sim
