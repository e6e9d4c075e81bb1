#include "kernels/lax/views.h"

#include <optional>
#include <utility>
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

// The two halves of a block, cut along its first dimension of size >= 2; a block with no
// such dimension goes one way whole.
std::pair<Ref, std::optional<Ref>> Halves(const Ref& block) {
  for (int d = 0; d < static_cast<int>(block.shape().size()); ++d) {
    const int64_t size = block.shape()[d];
    if (size < 2) continue;
    return {SliceDim(block, d, 0, size / 2), SliceDim(block, d, size / 2, size - size / 2)};
  }
  return {block, std::nullopt};
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
  if (operand.binding().offset != 0 || operand.binding().strides != whole.binding().strides ||
      NumElements(shape) > operand.size()) {
    throw Error(ErrorKind::kKernelMisuse, "cannot view '" + operand.Describe() + "' as " +
                                              ShapeString(shape) +
                                              ": only a whole operand may be reshaped.");
  }
  return Ref::Make(operand.binding().slot, operand.name(), shape, operand.dtype(),
                   operand.memory_space(), operand.semaphore_type());
}

void BidiRingGather(Kernel& k, const Ring& ring, const std::function<Ref(int)>& block,
                    const Ref& send_sems, const Ref& recv_sems) {
  for (int step = 0; step < ring.size - 1; ++step) {
    auto scope = k.named_scope("gather step " + std::to_string(step));
    // At step s the block that left device me - s (rightwards) or me + s (leftwards) moves
    // on one more hop.
    const auto [first, unused] = Halves(block(ring.index_at(-step)));
    const auto [ignored, second] = Halves(block(ring.index_at(step)));
    std::vector<AsyncCopy> copies;
    copies.push_back(k.async_remote_copy(first, first, send_sems.at(0, step), recv_sems.at(0, step),
                                         ring.right_device()));
    if (second) {
      copies.push_back(k.async_remote_copy(*second, *second, send_sems.at(1, step),
                                           recv_sems.at(1, step), ring.left_device()));
    }
    for (AsyncCopy& c : copies)
      c.start();
    for (AsyncCopy& c : copies)
      c.wait_send();
    for (AsyncCopy& c : copies)
      c.wait_recv();
  }
}

void CopyLocal(Kernel& k, const Ref& src, const Ref& dst, const Ref& sem) {
  AsyncCopy copy = k.async_copy(src, dst, sem);
  copy.start();
  copy.wait();
}

}  // namespace tpusim::kernels::lax
