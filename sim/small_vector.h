#pragma once

// A vector of trivially copyable elements whose first N live inside it, for the calendars a
// chunk reads on every hop (BandwidthPort): they hold a few intervals at a time, and kept in
// a heap block of their own each was one more cache miss per chunk on a 4096-chip slice.
// Past N it moves to the heap, as a vector grows.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace tpusim::sim {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>);

 public:
  SmallVector() = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  // Takes the other's heap block, or copies its inline elements; the other is left empty.
  SmallVector(SmallVector&& other) noexcept { *this = std::move(other); }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this == &other) return *this;
    size_ = other.size_;
    capacity_ = other.capacity_;
    heap_ = std::move(other.heap_);
    if (!heap_) std::memcpy(inline_, other.inline_, size_ * sizeof(T));
    other.size_ = 0;
    other.capacity_ = N;
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == capacity_) Grow();
    data()[size_++] = value;
  }
  // Inserts `value` before `at` (a pointer into this vector, or end()).
  void insert(const T* at, const T& value) {
    const size_t index = static_cast<size_t>(at - data());
    if (size_ == capacity_) Grow();
    T* d = data();
    std::memmove(d + index + 1, d + index, (size_ - index) * sizeof(T));
    d[index] = value;
    ++size_;
  }
  // Drops the first `n` elements.
  void erase_front(size_t n) {
    T* d = data();
    std::memmove(d, d + n, (size_ - n) * sizeof(T));
    size_ -= n;
  }
  void clear() { size_ = 0; }

 private:
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  void Grow() {
    auto bigger = std::make_unique_for_overwrite<T[]>(capacity_ * 2);
    std::memcpy(bigger.get(), data(), size_ * sizeof(T));
    heap_ = std::move(bigger);
    capacity_ *= 2;
  }

  size_t size_ = 0;
  size_t capacity_ = N;
  std::unique_ptr<T[]> heap_;  // null while the elements fit inline_
  T inline_[N];
};

}  // namespace tpusim::sim
