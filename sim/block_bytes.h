#pragma once

// A buffer's bytes (sim/memory.h) as fixed-size blocks that buffers share copy-on-write.
//
// A functional all-gather on 256 chips ends with 16 identical 16 MiB outputs per ring: each
// DMA lands bytes that already exist on the sending chip. A DMA whose source and destination
// are whole blocks hands over the blocks themselves (Share, then Adopt), and a write to a
// shared block copies it first (Own), so no write to one buffer shows in another. A block
// never written reads as the buffer's fill pattern (base::Uninitialized) and costs nothing.

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/base_names.h"

namespace tpusim::sim {

// One block's bytes; shared between buffers while none writes them.
using Block = std::shared_ptr<uint8_t[]>;

class BlockBytes {
 public:
  // 64 KiB: small enough that the halves and quarters of a DMA'd shard are whole blocks,
  // large enough that a 16 GiB HBM is a quarter-million blocks.
  static constexpr uint64_t kBlockBytes = uint64_t{1} << 16;

  BlockBytes() = default;
  BlockBytes(uint64_t size, Uninitialized fill) : size_(size), fill_(fill) {}

  uint64_t size() const { return size_; }
  // Whether anything wrote the bytes (a read of them before that is worth a note).
  bool written() const { return written_; }

  // Copies bytes [offset, offset + length) out / in. Writing un-shares the blocks it touches.
  void Read(uint64_t offset, uint64_t length, uint8_t* out) const;
  void Write(uint64_t offset, uint64_t length, const uint8_t* in);
  // Every byte, in one vector (the fill pattern where never written).
  std::vector<uint8_t> ReadAll() const;
  // Forgets every byte: the buffer reads as never written again.
  void Clear();

  // The block holding byte `offset` and the offset it starts at: for DMI, which grants one
  // block's bytes. A writable block is this buffer's alone from here on.
  uint64_t BlockStart(uint64_t offset) const { return offset / kBlockBytes * kBlockBytes; }
  uint64_t BlockLength(uint64_t offset) const;
  uint8_t* Writable(uint64_t offset) { return Own(offset / kBlockBytes); }
  // A block never written is filled (and kept) so a reader has bytes to point at.
  const uint8_t* Readable(uint64_t offset);
  bool Shared(uint64_t offset) const;

  // Appends the blocks of [offset, offset + length) to `out` when the range is whole blocks
  // (it starts on a block and ends on one or at the buffer's end); false otherwise. Blocks
  // never written are filled first, since the adopting buffer's pattern may differ.
  bool Share(uint64_t offset, uint64_t length, std::vector<Block>& out);
  // Puts shared blocks in place of [offset, offset + length) when the range is whole blocks
  // of the same sizes as those blocks; false (and nothing changed) otherwise.
  bool Adopt(uint64_t offset, uint64_t length, const std::vector<Block>& blocks);

  // The blocks, for telling buffers with the same blocks apart from others (null: unwritten).
  const std::vector<Block>& blocks() const { return blocks_; }
  const Uninitialized& fill() const { return fill_; }

 private:
  uint64_t BlockCount() const { return (size_ + kBlockBytes - 1) / kBlockBytes; }
  uint64_t LengthOf(uint64_t block) const;
  // Block `block`, allocated, filled or copied as needed so that only this buffer holds it.
  uint8_t* Own(uint64_t block);
  bool WholeBlocks(uint64_t offset, uint64_t length) const;

  uint64_t size_ = 0;
  Uninitialized fill_;
  bool written_ = false;
  std::vector<Block> blocks_;  // empty until written; a null block was never written
};

}  // namespace tpusim::sim
