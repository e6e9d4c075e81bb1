#pragma once

// Row-major index arithmetic for the host numerics of program ops.

#include <cstdint>

#include "dsl/array.h"

namespace tpusim::dsl {

// Elements between consecutive indices of each dimension.
inline Shape RowMajorStrides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// The multi-index of flat element `i`.
inline void Unflatten(int64_t i, const Shape& shape, Shape& index) {
  index.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : i % shape[d];
    i = shape[d] == 0 ? 0 : i / shape[d];
  }
}

inline int64_t FlatIndex(const Shape& index, const Shape& strides) {
  int64_t i = 0;
  for (size_t d = 0; d < index.size(); ++d)
    i += index[d] * strides[d];
  return i;
}

}  // namespace tpusim::dsl
