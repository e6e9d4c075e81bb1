#pragma once

// One chip's semaphores, by index (SemaphoreHandle::index): an array in segments of
// kSegment, whose first kInline segments' addresses lie in the table itself, beside which of
// their semaphores count bytes. A lookup reads the table's first line (the chip's
// ChipSemaphores, in the slice's hot arena) and then the semaphore: one cache miss on a pod
// where a std::deque took two, its map's block and then the element
// (docs/performance-at-scale.md, "A semaphore in one miss, a calendar of times"). A DMA's check
// (FindDma) reads the first line alone. Semaphores never move once made (threads and DMA
// engines keep pointers to them), and a chip never drops one nor changes its kind.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory_resource>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "sim/semaphore.h"

namespace tpusim::sim {

// Each semaphore's first 32 bytes (its value and what a chunk reads with it) then lie in one
// cache line.
static_assert(sizeof(Semaphore) % 32 == 0);

class SemaphoreTable {
 public:
  // A segment is 32 semaphores (4 KiB). Five of them inline cover 160 semaphores, what a
  // chip of the largest collectives makes (all_gather_nd on a 4-axis mesh: 130), and with the
  // size and their kinds fill the table's first line; more go through a vector of segments,
  // a second miss as the deque's was.
  static constexpr size_t kSegment = 32;
  static constexpr size_t kInline = 5;

  // Segments come from `memory`: a slice's come from its hot arena (SliceState::hot), where
  // one costs a few instructions; from the heap, an aligned allocation cost 1,700 (each chip
  // of a pod makes five or more while its kernel sets up).
  explicit SemaphoreTable(std::pmr::memory_resource* memory = std::pmr::new_delete_resource())
      : memory_(memory) {}
  SemaphoreTable(const SemaphoreTable&) = delete;
  SemaphoreTable& operator=(const SemaphoreTable&) = delete;
  ~SemaphoreTable() {
    for (size_t i = 0; i < size_; ++i)
      (*this)[i].~Semaphore();
    for (size_t s = 0; s * kSegment < size_; ++s)
      memory_->deallocate(Segment(s), kSegmentBytes, kAlign);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Semaphore& operator[](size_t i) { return Segment(i / kSegment)[i % kSegment]; }
  const Semaphore& operator[](size_t i) const { return Segment(i / kSegment)[i % kSegment]; }
  Semaphore& back() { return (*this)[size_ - 1]; }
  // The DMA semaphore at `index`; null when there is none, or it is of another kind. Read from
  // the table alone: a DMA's check need not reach the semaphore, a miss on a pod (the receive
  // semaphore is on another chip, and its first chunk lands much later).
  Semaphore* FindDma(size_t index) const {
    if (index >= size_) return nullptr;
    const size_t segment = index / kSegment, at = index % kSegment;
    const bool dma =
        (segment < kInline ? dma_[segment] : overflow_[segment - kInline].dma) >> at & 1;
    return dma ? Segment(segment) + at : nullptr;
  }

  Semaphore& emplace_back(const std::string* name, SemaphoreKind kind) {
    const size_t segment = size_ / kSegment;
    if (size_ % kSegment == 0) {
      // On a line of its own, so that a semaphore's first fields (sim/semaphore.h) share one.
      auto* memory = static_cast<Semaphore*>(memory_->allocate(kSegmentBytes, kAlign));
      if (segment < kInline) {
        inline_[segment] = memory;
      } else {
        try {
          overflow_.push_back({memory, 0});
        } catch (...) {
          memory_->deallocate(memory, kSegmentBytes, kAlign);
          throw;
        }
      }
    }
    Semaphore* s = new (Segment(segment) + size_ % kSegment) Semaphore(name, kind);
    if (kind == SemaphoreKind::kDma) {
      const uint32_t bit = uint32_t{1} << (size_ % kSegment);
      (segment < kInline ? dma_[segment] : overflow_[segment - kInline].dma) |= bit;
    }
    ++size_;
    return *s;
  }

  // In index order, for reports.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Semaphore;
    using difference_type = std::ptrdiff_t;
    using pointer = const Semaphore*;
    using reference = const Semaphore&;
    const_iterator(const SemaphoreTable* table, size_t i) : table_(table), i_(i) {}
    const Semaphore& operator*() const { return (*table_)[i_]; }
    const Semaphore* operator->() const { return &(*table_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& other) const { return i_ == other.i_; }

   private:
    const SemaphoreTable* table_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kSegmentBytes = kSegment * sizeof(Semaphore);
  Semaphore* Segment(size_t s) const {
    return s < kInline ? inline_[s] : overflow_[s - kInline].memory;
  }

  // The first line (the table starts on one: ChipSemaphores): what a lookup reads.
  uint32_t size_ = 0;
  // Bit i of dma_[s]: semaphore s * kSegment + i is a DMA semaphore.
  uint32_t dma_[kInline] = {};
  Semaphore* inline_[kInline] = {};
  struct Overflow {
    Semaphore* memory;
    uint32_t dma;  // as dma_
  };
  std::vector<Overflow> overflow_;
  std::pmr::memory_resource* memory_;
};
static_assert(SemaphoreTable::kSegment <= 32, "a segment's kinds in a uint32_t");

class CoreThread;

// One chip's semaphores and the threads of control a change may wake: the chip's own
// (Chip::semaphores). The DMA path touches them for every DMA and every wait, so the slice lays
// all chips' out side by side in its hot arena, one array found by arithmetic
// (SliceState::TakeChipSemaphores): made with each chip instead, among its other state, the
// v4-16x16x16 all-gather ran 18% slower. Two lines: the table's first, then the rest.
struct alignas(64) ChipSemaphores {
  explicit ChipSemaphores(std::pmr::memory_resource* memory = std::pmr::new_delete_resource())
      : semaphores(memory) {
    waiters.reserve(4);
  }
  SemaphoreTable semaphores;
  // The chip's threads of control in the order they were made: the core, then its live
  // activities.
  std::vector<CoreThread*> waiters;
};
static_assert(sizeof(ChipSemaphores) == 128, "a chip's semaphores in two lines");

}  // namespace tpusim::sim
