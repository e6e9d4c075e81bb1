#pragma once

// Shapes as HLO text prints them: an array `f32[2,32]{1,0}` (element type, dimensions,
// dynamic dimensions `<=8` or `?`, an optional layout), a tuple `(f32[2], s32[])` or a
// token `token[]`. ToString prints what XLA prints, so a parsed shape reads back the same.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/primitive_type.h"

namespace tpusim::hlo {

// The size of an unbounded dynamic dimension, printed `?`.
inline constexpr int64_t kUnboundedSize = -1;

struct Layout {
  // Dimension numbers from the fastest-varying to the slowest: {1,0} is row-major for rank 2.
  std::vector<int64_t> minor_to_major;
  // Everything after ':' as printed, e.g. "T(8,128)(2,1)S(1)"; empty when there is no ':'.
  std::string details;
  // Decoded from the details: the tiles "T(8,128)(2,1)" (text), the memory space S(n) (0 when
  // absent: device memory) and the packed element size E(n) in bits (0 when absent).
  std::string tiles;
  int64_t memory_space = 0;
  int64_t element_size_in_bits = 0;

  std::string ToString() const;  // "{1,0}", "{1,0:T(8,128)S(1)}"
  bool operator==(const Layout&) const = default;
};

struct Shape {
  enum class Kind { kArray, kTuple, kToken };

  Kind kind = Kind::kArray;
  PrimitiveType element_type = PrimitiveType::kF32;  // kArray only
  std::vector<int64_t> dimensions;       // kArray; a bounded dynamic one holds its bound
  std::vector<bool> dynamic_dimensions;  // kArray: one per dimension
  std::optional<Layout> layout;          // kArray, when printed
  std::vector<Shape> tuple_shapes;       // kTuple

  static Shape Array(PrimitiveType type, std::vector<int64_t> dimensions);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();

  bool IsArray() const { return kind == Kind::kArray; }
  bool IsTuple() const { return kind == Kind::kTuple; }
  bool IsToken() const { return kind == Kind::kToken; }
  int rank() const { return static_cast<int>(dimensions.size()); }

  // An array's number of elements (a bounded dynamic dimension counts at its bound); 1 for
  // a scalar, 0 for a tuple or a token. Throws tpusim::Error for an unbounded dimension or
  // a count past 2^63.
  int64_t ElementCount() const;
  // Bytes of the data: an array's elements at ByteWidth (or packed at the layout's
  // element_size_in_bits), a tuple's elements summed, 0 for a token. Throws as ElementCount.
  int64_t ByteSize() const;

  // As HLO prints it: "f32[2,32]{1,0}", "f32[<=8,4]", "(f32[2]{0}, s32[])", "token[]".
  std::string ToString(bool print_layout = true) const;

  bool operator==(const Shape&) const = default;
};

// Same kind, element types, dimensions and dynamic dimensions, recursively; layouts aside.
bool Compatible(const Shape& a, const Shape& b);

// A position inside a tuple shape, printed "{}" or "{0,1}".
using ShapeIndex = std::vector<int64_t>;
std::string ShapeIndexToString(const ShapeIndex& index);

}  // namespace tpusim::hlo
