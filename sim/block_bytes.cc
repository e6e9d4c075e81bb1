#include "sim/block_bytes.h"

#include <algorithm>
#include <cstring>

namespace tpusim::sim {

uint64_t BlockBytes::LengthOf(uint64_t block) const {
  return std::min(kBlockBytes, size_ - block * kBlockBytes);
}

uint64_t BlockBytes::BlockLength(uint64_t offset) const {
  return LengthOf(offset / kBlockBytes);
}

uint8_t* BlockBytes::Own(uint64_t block) {
  if (blocks_.empty()) blocks_.resize(BlockCount());
  written_ = true;
  Block& b = blocks_[block];
  if (b && b.use_count() == 1) return b.get();
  const uint64_t length = LengthOf(block);
  Block own = std::make_shared_for_overwrite<uint8_t[]>(length);
  if (b) {
    std::memcpy(own.get(), b.get(), length);
  } else {
    fill_.Fill(block * kBlockBytes, length, own.get());
  }
  b = std::move(own);
  return b.get();
}

const uint8_t* BlockBytes::Readable(uint64_t offset) {
  const uint64_t block = offset / kBlockBytes;
  if (!blocks_.empty() && blocks_[block]) return blocks_[block].get();
  const bool was_written = written_;
  const uint8_t* bytes = Own(block);
  written_ = was_written;  // filling is not writing
  return bytes;
}

bool BlockBytes::Shared(uint64_t offset) const {
  if (blocks_.empty()) return false;
  const Block& b = blocks_[offset / kBlockBytes];
  return b && b.use_count() > 1;
}

void BlockBytes::Read(uint64_t offset, uint64_t length, uint8_t* out) const {
  while (length > 0) {
    const uint64_t block = offset / kBlockBytes;
    const uint64_t within = offset - block * kBlockBytes;
    const uint64_t run = std::min(length, LengthOf(block) - within);
    if (!blocks_.empty() && blocks_[block]) {
      std::memcpy(out, blocks_[block].get() + within, run);
    } else {
      fill_.Fill(offset, run, out);
    }
    offset += run;
    out += run;
    length -= run;
  }
}

void BlockBytes::Write(uint64_t offset, uint64_t length, const uint8_t* in) {
  while (length > 0) {
    const uint64_t block = offset / kBlockBytes;
    const uint64_t within = offset - block * kBlockBytes;
    const uint64_t run = std::min(length, LengthOf(block) - within);
    if (within == 0 && run == LengthOf(block) && !blocks_.empty() && blocks_[block] &&
        blocks_[block].use_count() > 1) {
      blocks_[block].reset();  // overwritten whole: no need to copy the shared bytes first
    }
    std::memcpy(Own(block) + within, in, run);
    offset += run;
    in += run;
    length -= run;
  }
}

std::vector<uint8_t> BlockBytes::ReadAll() const {
  std::vector<uint8_t> bytes(size_);
  Read(0, size_, bytes.data());
  return bytes;
}

void BlockBytes::Clear() {
  std::vector<Block>().swap(blocks_);
  written_ = false;
}

bool BlockBytes::WholeBlocks(uint64_t offset, uint64_t length) const {
  const uint64_t end = offset + length;
  return length > 0 && end <= size_ && offset % kBlockBytes == 0 &&
         (end % kBlockBytes == 0 || end == size_);
}

bool BlockBytes::Share(uint64_t offset, uint64_t length, std::vector<Block>& out) {
  if (!WholeBlocks(offset, length)) return false;
  if (blocks_.empty()) blocks_.resize(BlockCount());
  for (uint64_t block = offset / kBlockBytes; block * kBlockBytes < offset + length; ++block) {
    if (!blocks_[block]) Readable(block * kBlockBytes);
    out.push_back(blocks_[block]);
  }
  return true;
}

bool BlockBytes::Adopt(uint64_t offset, uint64_t length, const std::vector<Block>& blocks) {
  // The blocks came from a range of whole blocks of the same length: if this range is whole
  // blocks too, and its last block is as long as theirs, every block has the size it needs.
  if (!WholeBlocks(offset, length) || blocks.size() != (length + kBlockBytes - 1) / kBlockBytes ||
      (length % kBlockBytes != 0 && offset + length != size_)) {
    return false;
  }
  if (blocks_.empty()) blocks_.resize(BlockCount());
  std::copy(blocks.begin(), blocks.end(),
            blocks_.begin() + static_cast<int64_t>(offset / kBlockBytes));
  written_ = true;
  return true;
}

}  // namespace tpusim::sim
