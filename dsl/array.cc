#include "dsl/array.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "base/errors.h"
#include "base/time.h"

namespace tpusim::dsl {

namespace {

// Copies a box of `sizes` elements between two row-major arrays, row by row.
void CopyBox(const uint8_t* src, const Shape& src_shape, const Shape& src_offsets, uint8_t* dst,
             const Shape& dst_shape, const Shape& dst_offsets, const Shape& sizes, int esize) {
  const size_t dims = sizes.size();
  if (NumElements(sizes) == 0) return;
  if (dims == 0) {
    std::memcpy(dst, src, esize);
    return;
  }
  std::vector<int64_t> src_strides(dims, 1), dst_strides(dims, 1);
  for (size_t d = dims - 1; d > 0; --d) {
    src_strides[d - 1] = src_strides[d] * src_shape[d];
    dst_strides[d - 1] = dst_strides[d] * dst_shape[d];
  }
  const int64_t row = sizes[dims - 1] * esize;
  std::vector<int64_t> index(dims - 1, 0);
  while (true) {
    int64_t s = src_offsets[dims - 1], t = dst_offsets[dims - 1];
    for (size_t d = 0; d + 1 < dims; ++d) {
      s += (src_offsets[d] + index[d]) * src_strides[d];
      t += (dst_offsets[d] + index[d]) * dst_strides[d];
    }
    std::memcpy(dst + t * esize, src + s * esize, row);
    size_t d = dims - 1;
    while (d > 0) {
      --d;
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (dims == 1) return;
  }
}

std::string IndexString(const Shape& shape, int64_t flat) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return ShapeString(index);
}

}  // namespace

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) {
      throw Error(
          ErrorKind::kInvalidArgument,
          "shape " + ShapeString(shape) + " has a negative dimension; sizes are 0 or more.");
    }
    if (__builtin_mul_overflow(n, d, &n)) {
      throw Error(ErrorKind::kInvalidArgument,
                  "shape " + ShapeString(shape) +
                      " has more elements than a 64-bit count holds; use a smaller size.");
    }
  }
  return n;
}

uint64_t AvailableHostMemory() {
  // MemAvailable is what the kernel can give without swapping; physical pages otherwise.
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                               : ~uint64_t{0};
}

void RequireHostMemory(uint64_t bytes, const std::string& what) {
  const uint64_t available = AvailableHostMemory();
  if (bytes <= available) return;
  throw Error(ErrorKind::kCapacity,
              what + " needs " + base::FormatBytes(bytes) + " of host memory, but only " +
                  base::FormatBytes(available) +
                  " is available; run it timing-only (no payload, the same timing) or "
                  "choose a smaller size.");
}

std::string ShapeString(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string TypeString(DType dtype, const Shape& shape) {
  std::string s = std::string(DTypeName(dtype)) + "[";
  // Appending piecewise: `"," + std::to_string(...)` trips GCC 12's -Wrestrict false positive.
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Array::Array(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(NumElements(shape_)), SizeOf(dtype), &bytes))
    bytes = ~uint64_t{0};
  RequireHostMemory(bytes, "the array " + TypeString(dtype, shape_));
  bytes_ = std::make_shared<std::vector<uint8_t>>(bytes, 0);
}

std::vector<uint8_t>& Array::bytes() {
  if (!bytes_) {
    bytes_ = std::make_shared<std::vector<uint8_t>>();
  } else if (bytes_.use_count() > 1) {
    bytes_ = std::make_shared<std::vector<uint8_t>>(*bytes_);
  }
  return *bytes_;
}

const std::vector<uint8_t>& Array::bytes() const {
  static const std::vector<uint8_t> kNone;
  return bytes_ ? *bytes_ : kNone;
}

Array Array::Placeholder(Shape shape, DType dtype) {
  Array a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  return a;
}

Array Array::Random(Shape shape, DType dtype, uint64_t seed) {
  Array a(std::move(shape), dtype);
  std::mt19937_64 engine(seed);
  const int64_t n = a.size();
  for (int64_t i = 0; i < n; ++i) {
    // Integer arithmetic keeps the values identical across standard libraries.
    const double u = static_cast<double>(engine() >> 11) / static_cast<double>(1ull << 53);
    a.SetFlat(i, IsFloating(dtype)         ? u * 2 - 1
                 : dtype == DType::kBool   ? std::floor(u * 2)
                 : dtype == DType::kUInt32 ? std::floor(u * 200)
                                           : std::floor(u * 200 - 100));
  }
  return a;
}

Array Array::Iota(Shape shape, DType dtype) {
  Array a(std::move(shape), dtype);
  for (int64_t i = 0, elements = a.size(); i < elements; ++i)
    a.SetFlat(i, static_cast<double>(i));
  return a;
}

double Array::GetFlat(int64_t i) const {
  const uint8_t* p = bytes_->data() + i * SizeOf(dtype_);
  switch (dtype_) {
    case DType::kBF16: {
      bf16 v;
      std::memcpy(&v, p, 2);
      return static_cast<double>(static_cast<float>(v));
    }
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kInt8:
      return static_cast<int8_t>(*p);
    case DType::kBool:
      return *p != 0 ? 1 : 0;
    case DType::kUInt32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::kF16: {
      Eigen::half v;
      std::memcpy(&v, p, 2);
      return static_cast<double>(static_cast<float>(v));
    }
  }
  return 0;
}

void Array::SetFlat(int64_t i, double value) {
  uint8_t* p = bytes().data() + i * SizeOf(dtype_);
  switch (dtype_) {
    case DType::kBF16: {
      const bf16 v(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      return;
    }
    case DType::kF32: {
      const float v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::kInt32: {
      const int32_t v = static_cast<int32_t>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::kInt8:
      *p = static_cast<uint8_t>(static_cast<int8_t>(value));
      return;
    case DType::kBool:
      *p = value != 0 ? 1 : 0;
      return;
    case DType::kUInt32: {
      const auto v = static_cast<uint32_t>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::kInt64: {
      const auto v = static_cast<int64_t>(value);
      std::memcpy(p, &v, 8);
      return;
    }
    case DType::kF16: {
      const Eigen::half v(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      return;
    }
  }
}

namespace {

// Throws Error(kOutOfBounds) unless the box [offsets, offsets + sizes) lies inside `shape`;
// overflow-safe (offset > extent - size, never offset + size).
void CheckBox(const char* op, const Shape& shape, DType dtype, const Shape& offsets,
              const Shape& sizes, bool has_data) {
  if (!has_data) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string("Array::") + op + " on a placeholder " + TypeString(dtype, shape) +
                    ", which has no data; give both arrays data (placeholders are for "
                    "timing-only runs).");
  }
  bool inside = offsets.size() == shape.size() && sizes.size() == shape.size();
  for (size_t d = 0; inside && d < shape.size(); ++d)
    inside = offsets[d] >= 0 && sizes[d] >= 0 && sizes[d] <= shape[d] &&
             offsets[d] <= shape[d] - sizes[d];
  if (inside) return;
  throw Error(ErrorKind::kOutOfBounds,
              std::string("Array::") + op + " of a box of " + ShapeString(sizes) + " at " +
                  ShapeString(offsets) + " does not fit in the array " + TypeString(dtype, shape) +
                  "; give one offset and size per dimension, with 0 <= offset and "
                  "offset + size <= the dimension.");
}

}  // namespace

Array Array::Slice(const Shape& offsets, const Shape& sizes) const {
  CheckBox("Slice", shape_, dtype_, offsets, sizes, has_data());
  Array out(sizes, dtype_);
  CopyBox(data(), shape_, offsets, out.data(), sizes, Shape(sizes.size(), 0), sizes,
          SizeOf(dtype_));
  return out;
}

void Array::Place(const Array& block, const Shape& offsets) {
  CheckBox("Place", shape_, dtype_, offsets, block.shape(), has_data() && block.has_data());
  CopyBox(block.data(), block.shape(), Shape(block.shape().size(), 0), data(), shape_, offsets,
          block.shape(), SizeOf(dtype_));
}

Comparison CompareExact(const Array& actual, const Array& expected) {
  return CompareClose(actual, expected, 0, 0);
}

Comparison CompareClose(const Array& actual, const Array& expected, double rtol, double atol) {
  Comparison c;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    c.equal = false;
    c.detail = "got " + TypeString(actual.dtype(), actual.shape()) + ", expected " +
               TypeString(expected.dtype(), expected.shape());
    return c;
  }
  if (rtol == 0 && atol == 0 && actual.bytes() == expected.bytes()) return c;
  int64_t mismatches = 0;
  for (int64_t i = 0, elements = actual.size(); i < elements; ++i) {
    const double a = actual.GetFlat(i), e = expected.GetFlat(i);
    const bool ok = rtol == 0 && atol == 0
                        ? std::memcmp(actual.data() + i * SizeOf(actual.dtype()),
                                      expected.data() + i * SizeOf(expected.dtype()),
                                      SizeOf(actual.dtype())) == 0
                        : std::abs(a - e) <= atol + rtol * std::abs(e);
    if (ok) continue;
    if (mismatches++ == 0) {
      std::ostringstream s;
      s << "element " << IndexString(actual.shape(), i) << " is " << a << ", expected " << e;
      c.detail = s.str();
    }
  }
  if (mismatches) {
    c.equal = false;
    c.detail += " (" + std::to_string(mismatches) + " of " + std::to_string(actual.size()) +
                " elements differ)";
  }
  return c;
}

}  // namespace tpusim::dsl
