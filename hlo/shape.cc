#include "hlo/shape.h"

#include "base/errors.h"

namespace tpusim::hlo {

namespace {

void AppendInts(std::string& out, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
}

int64_t CheckedProduct(int64_t a, int64_t b, const Shape& shape) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw Error(ErrorKind::kInvalidArgument,
                "The shape " + shape.ToString() + " has more than 2^63 elements or bytes.");
  }
  return product;
}

}  // namespace

std::string Layout::ToString() const {
  std::string out = "{";
  AppendInts(out, minor_to_major);
  if (!details.empty()) out += ":" + details;
  return out + "}";
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dimensions) {
  Shape shape;
  shape.element_type = type;
  shape.dynamic_dimensions.assign(dimensions.size(), false);
  shape.dimensions = std::move(dimensions);
  return shape;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.kind = Kind::kTuple;
  shape.tuple_shapes = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.kind = Kind::kToken;
  return shape;
}

int64_t Shape::ElementCount() const {
  if (kind != Kind::kArray) return 0;
  int64_t count = 1;
  for (const int64_t dimension : dimensions) {
    if (dimension < 0) {
      throw Error(ErrorKind::kInvalidArgument,
                  "The shape " + ToString() + " has an unbounded dimension, so no element count.");
    }
    count = CheckedProduct(count, dimension, *this);
  }
  return count;
}

int64_t Shape::ByteSize() const {
  switch (kind) {
    case Kind::kToken:
      return 0;
    case Kind::kTuple: {
      int64_t total = 0;
      for (const Shape& element : tuple_shapes) {
        if (__builtin_add_overflow(total, element.ByteSize(), &total)) {
          throw Error(ErrorKind::kInvalidArgument,
                      "The shape " + ToString() + " has more than 2^63 bytes.");
        }
      }
      return total;
    }
    case Kind::kArray:
      break;
  }
  const int64_t elements = ElementCount();
  if (layout && layout->element_size_in_bits > 0) {
    const int64_t bits = CheckedProduct(elements, layout->element_size_in_bits, *this);
    return bits / 8 + (bits % 8 != 0 ? 1 : 0);
  }
  return CheckedProduct(elements, ByteWidth(element_type), *this);
}

std::string Shape::ToString(bool print_layout) const {
  switch (kind) {
    case Kind::kToken:
      return "token[]";
    case Kind::kTuple: {
      std::string out = "(";
      for (size_t i = 0; i < tuple_shapes.size(); ++i) {
        if (i > 0) out += ", ";
        out += tuple_shapes[i].ToString(print_layout);
      }
      return out + ")";
    }
    case Kind::kArray:
      break;
  }
  std::string out(PrimitiveTypeName(element_type));
  out += '[';
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (i > 0) out += ',';
    const bool dynamic = i < dynamic_dimensions.size() && dynamic_dimensions[i];
    if (dimensions[i] == kUnboundedSize) {
      out += '?';
    } else {
      if (dynamic) out += "<=";
      out += std::to_string(dimensions[i]);
    }
  }
  out += ']';
  if (print_layout && layout) out += layout->ToString();
  return out;
}

bool Compatible(const Shape& a, const Shape& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Shape::Kind::kToken:
      return true;
    case Shape::Kind::kArray:
      return a.element_type == b.element_type && a.dimensions == b.dimensions &&
             a.dynamic_dimensions == b.dynamic_dimensions;
    case Shape::Kind::kTuple:
      break;
  }
  if (a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
  for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
    if (!Compatible(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
  }
  return true;
}

std::string ShapeIndexToString(const ShapeIndex& index) {
  std::string out = "{";
  AppendInts(out, index);
  return out + "}";
}

}  // namespace tpusim::hlo
