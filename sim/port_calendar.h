#pragma once

// A port's calendar of intervals (BandwidthPort): a vector of trivially copyable entries with
// N of them inline, like base::InlineVector, but one that goes back to its inline entries
// whenever it empties, keeping its heap block for the next time it grows. A pod's memory port
// holds more than four intervals for a while and then none: on the heap for good, every
// booking's scans missed on the heap block after the port's own lines, which the calendar's
// look-ahead asks for (docs/performance-at-scale.md, "A semaphore in one miss, a calendar of
// times").

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "base/inline_vector.h"

namespace tpusim::sim {

template <typename T, size_t N>
class PortCalendar : public base::ContiguousElements<PortCalendar<T, N>, T> {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>);

 public:
  PortCalendar() = default;
  PortCalendar(const PortCalendar&) = delete;
  PortCalendar& operator=(const PortCalendar&) = delete;

  size_t size() const { return size_; }
  size_t capacity() const { return on_heap_ ? heap_capacity_ : N; }
  T* data() { return on_heap_ ? heap_.get() : inline_; }
  const T* data() const { return on_heap_ ? heap_.get() : inline_; }

  // Empty, and inline again; the heap block stays for the next growth.
  void clear() {
    size_ = 0;
    on_heap_ = false;
  }
  void insert(const T* at, T value) {
    const size_t index = static_cast<size_t>(at - data());
    if (size_ == capacity()) Grow();
    base::InsertIntoElements(data(), size_, index, value);
    ++size_;
  }
  void erase_front(size_t n) {
    base::DropFrontElements(data(), size_, n);
    size_ -= static_cast<uint32_t>(n);
  }

 private:
  // Twice the entries: onto the heap block kept from before when it is large enough.
  void Grow() {
    const size_t wanted = 2 * capacity();
    if (heap_capacity_ < wanted) {
      auto bigger = std::make_unique_for_overwrite<T[]>(wanted);
      std::memcpy(bigger.get(), data(), size_ * sizeof(T));
      heap_ = std::move(bigger);
      heap_capacity_ = static_cast<uint32_t>(wanted);
    } else if (!on_heap_) {
      std::memcpy(heap_.get(), inline_, size_ * sizeof(T));
    }
    on_heap_ = true;
  }

  uint32_t size_ = 0;
  uint32_t heap_capacity_ = 0;
  bool on_heap_ = false;
  std::unique_ptr<T[]> heap_;
  T inline_[N];
};

}  // namespace tpusim::sim
