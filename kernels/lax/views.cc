#include "kernels/lax/views.h"

#include <algorithm>
#include <vector>

#include "base/errors.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

std::vector<Slice> WholeUpTo(const Ref& ref, int dim) {
  std::vector<Slice> slices;
  for (int d = 0; d < dim; ++d)
    slices.push_back(ds(0, ref.shape()[d]));
  return slices;
}

}  // namespace

Ref SliceDim(const Ref& ref, int dim, int64_t start, int64_t size) {
  std::vector<Slice> slices = WholeUpTo(ref, dim);
  slices.push_back(ds(start, size));
  return ref.Sliced(slices);
}

Ref IndexDim(const Ref& ref, int dim, int64_t index) {
  std::vector<Slice> slices = WholeUpTo(ref, dim);
  slices.emplace_back(index);
  return ref.Sliced(slices);
}

Ref Reshape(const Ref& operand, const Shape& shape) {
  const Ref whole = Ref::Make(operand.binding().slot, operand.name(), operand.shape(),
                              operand.dtype(), operand.memory_space(), operand.semaphore_type());
  if (operand.binding().offset != 0 || !std::ranges::equal(operand.strides(), whole.strides()) ||
      NumElements(shape) > operand.size()) {
    throw Error(ErrorKind::kKernelMisuse, "cannot view '" + operand.Describe() + "' as " +
                                              ShapeString(shape) +
                                              ": only a whole operand may be reshaped.");
  }
  return Ref::Make(operand.binding().slot, operand.name(), shape, operand.dtype(),
                   operand.memory_space(), operand.semaphore_type());
}

void CopyLocal(Kernel& k, const Ref& src, const Ref& dst, const Ref& sem) {
  AsyncCopy copy = k.async_copy(src, dst, sem);
  copy.start();
  copy.wait();
}

}  // namespace tpusim::kernels::lax
