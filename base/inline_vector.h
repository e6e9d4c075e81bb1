#pragma once

// A copyable vector of trivially copyable elements whose first N live inside it, for the
// few-element lists every DMA carries or reads: a ByteBox's counts and strides, a Ref view's
// strides (as std::vectors they were eight heap blocks per DMA, allocated when the kernel
// resolved its refs and again when the engine kept the request, then freed), a Transfer's
// hops and a port's calendar (in a heap block of their own each was one more cache miss per
// chunk on a 4096-chip slice). Past N it moves to the heap, as a vector grows. Only the
// operations those users need.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>

namespace tpusim::base {

// The element moves of insert and erase_front, shared with the vectors built like this one
// (sim/port_calendar.h). Inserting at `index` of `size` elements (room for one more) is a
// loop: an append (most of a port's bookings) moves nothing and calls nothing, where memmove
// of zero bytes was a call through the PLT per chunk and port.
template <typename T>
void InsertIntoElements(T* elements, size_t size, size_t index, T value) {
  for (size_t i = size; i > index; --i)
    elements[i] = elements[i - 1];
  elements[index] = value;
}
// Moves all but the first `n` of `size` elements to the front.
template <typename T>
void DropFrontElements(T* elements, size_t size, size_t n) {
  std::memmove(elements, elements + n, (size - n) * sizeof(T));
}

// Element access for a vector whose elements lie together from its data(), written once for
// the vectors built like this one (sim/port_calendar.h): Derived has data() and size().
template <typename Derived, typename T>
class ContiguousElements {
 public:
  T* begin() { return self().data(); }
  T* end() { return self().data() + self().size(); }
  const T* begin() const { return self().data(); }
  const T* end() const { return self().data() + self().size(); }
  T& operator[](size_t i) { return self().data()[i]; }
  const T& operator[](size_t i) const { return self().data()[i]; }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

template <typename T, size_t N>
class InlineVector : public ContiguousElements<InlineVector<T, N>, T> {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>);
  static_assert(N > 0);

 public:
  using value_type = T;

  InlineVector() = default;
  InlineVector(std::initializer_list<T> values) { Assign(values.begin(), values.size()); }
  InlineVector(size_t count, T value) { assign(count, value); }
  InlineVector(const InlineVector& other) { CopyFrom(other); }
  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) CopyFrom(other);
    return *this;
  }
  // Takes the other's heap block, or copies its inline elements; the other is left empty.
  InlineVector(InlineVector&& other) noexcept { *this = std::move(other); }
  InlineVector& operator=(InlineVector&& other) noexcept {
    if (this == &other) return *this;
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
    } else {
      CopyFrom(other);
    }
    size_ = other.size_;
    other.size_ = 0;
    other.capacity_ = N;
    return *this;
  }
  InlineVector& operator=(std::initializer_list<T> values) {
    Assign(values.begin(), values.size());
    return *this;
  }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void reserve(size_t count) {
    if (count > capacity_) Grow(count);
  }
  // The value by copy: it may be one of this vector's own elements, which growing frees.
  void push_back(T value) {
    if (size_ == capacity_) Grow(capacity_ * 2);
    data()[size_++] = value;
  }
  // Inserts `value` before `at` (a pointer into this vector, or end()).
  void insert(const T* at, T value) {
    const size_t index = static_cast<size_t>(at - data());
    if (size_ == capacity_) Grow(capacity_ * 2);
    InsertIntoElements(data(), size_, index, value);
    ++size_;
  }
  // Drops the first `n` elements.
  void erase_front(size_t n) {
    DropFrontElements(data(), size_, n);
    size_ -= static_cast<uint32_t>(n);
  }
  void assign(size_t count, T value) {
    reserve(count);
    std::fill_n(data(), count, value);
    size_ = static_cast<uint32_t>(count);
  }
  void clear() { size_ = 0; }
  // Sets the size, keeping the first elements; elements past the old size are left as the
  // storage holds them (to be overwritten: e.g. through data() after a resize to the most
  // a loop may write, then a resize to what it wrote).
  void resize_for_overwrite(size_t count) {
    reserve(count);
    size_ = static_cast<uint32_t>(count);
  }

  friend bool operator==(const InlineVector& a, const InlineVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void Assign(const T* values, size_t count) {
    reserve(count);
    if (count > 0) std::memmove(data(), values, count * sizeof(T));
    size_ = static_cast<uint32_t>(count);
  }
  // Between two inline vectors the whole of inline_ is copied, a size known when compiling:
  // a few register moves instead of a call to memmove per vector (a DMA request carries
  // four of them, copied when the engine keeps it). inline_ is always initialized, so the
  // elements past size_ copy defined values. A vector with a heap block keeps it for reuse.
  void CopyFrom(const InlineVector& other) {
    if (!heap_ && !other.heap_) {
      std::memcpy(inline_, other.inline_, sizeof inline_);
      size_ = other.size_;
    } else {
      Assign(other.data(), other.size_);
    }
  }
  void Grow(size_t capacity) {
    auto bigger = std::make_unique_for_overwrite<T[]>(capacity);
    if (size_ > 0) std::memcpy(bigger.get(), data(), size_ * sizeof(T));
    heap_ = std::move(bigger);
    capacity_ = static_cast<uint32_t>(capacity);
  }

  uint32_t size_ = 0;  // 32 bits: a box or view has a few dimensions, never billions
  uint32_t capacity_ = N;
  std::unique_ptr<T[]> heap_;  // null while the elements fit inline_
  T inline_[N] = {};
};

}  // namespace tpusim::base
