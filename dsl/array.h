#pragma once

// A host array: a shape, a dtype and row-major bytes. Inputs are built from these and
// outputs come back as these, so a kernel's result can be checked against a reference.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dsl/dtype.h"

namespace tpusim::dsl {

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
std::string ShapeString(const Shape& shape);              // "(256, 128)"
std::string TypeString(DType dtype, const Shape& shape);  // "bf16[256,128]"

// Host bytes this process may still allocate without swapping.
uint64_t AvailableHostMemory();
// Throws Error(kCapacity) naming `what`, the bytes it needs and what is available, and
// suggesting --timing-only or a smaller size, when `bytes` would not fit: checked before
// allocating, so no std::bad_alloc reaches a user.
void RequireHostMemory(uint64_t bytes, const std::string& what);

// An array's type without its data: what shape functions and signatures pass around.
struct ShapeDtype {
  Shape shape;
  DType dtype;
};

class Array {
 public:
  Array() = default;
  // Zero-filled.
  Array(Shape shape, DType dtype);

  // Shape and dtype without payload, for timing-only runs.
  static Array Placeholder(Shape shape, DType dtype);

  // Deterministic pseudo-random values in [-1, 1), rounded to the dtype.
  static Array Random(Shape shape, DType dtype, uint64_t seed);
  // 0, 1, 2, ... rounded to the dtype: handy for seeing where data went.
  static Array Iota(Shape shape, DType dtype);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t size() const { return NumElements(shape_); }
  uint64_t nbytes() const { return static_cast<uint64_t>(size()) * SizeOf(dtype_); }
  bool has_data() const { return bytes().size() == nbytes(); }
  // Copies of an array share its bytes until one of them is written: the non-const accessors
  // copy the bytes first when another array holds them, so take a writable pointer after
  // copying, not before.
  uint8_t* data() { return bytes().data(); }
  const uint8_t* data() const { return bytes().data(); }
  std::vector<uint8_t>& bytes();
  const std::vector<uint8_t>& bytes() const;
  // Bytes shared with whoever else holds them (Engine::TakeHost's hand-off).
  void ShareBytes(std::shared_ptr<std::vector<uint8_t>> bytes) { bytes_ = std::move(bytes); }
  // Whether the two hold the very same bytes (not a copy of them).
  bool SharesBytesWith(const Array& other) const {
    return bytes_ != nullptr && bytes_ == other.bytes_;
  }
  // The same dtype, shape and bytes (NaN payloads and -0 included): what lets a result computed
  // from one array stand for a result computed from the other.
  bool SameBytes(const Array& other) const {
    return dtype_ == other.dtype_ && shape_ == other.shape_ &&
           (SharesBytesWith(other) || bytes() == other.bytes());
  }

  // Element i of the flattened array, converted to / from double.
  double GetFlat(int64_t i) const;
  void SetFlat(int64_t i, double value);

  // The box [offsets, offsets + sizes) as a new array.
  Array Slice(const Shape& offsets, const Shape& sizes) const;
  // Writes `block` into this array at `offsets`.
  void Place(const Array& block, const Shape& offsets);

 private:
  Shape shape_;
  DType dtype_ = DType::kF32;
  std::shared_ptr<std::vector<uint8_t>> bytes_;  // null: no data
};

// Exact comparison of dtype, shape and every element; on a mismatch, says where.
struct Comparison {
  bool equal = true;
  std::string detail;  // empty when equal
};
Comparison CompareExact(const Array& actual, const Array& expected);
// Element-wise |a - e| <= atol + rtol * |e|.
Comparison CompareClose(const Array& actual, const Array& expected, double rtol, double atol);

}  // namespace tpusim::dsl
