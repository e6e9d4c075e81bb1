#include "dsl/ref.h"

#include "base/errors.h"

namespace tpusim::dsl {

const char* MemorySpaceName(MemorySpace space) {
  switch (space) {
    case MemorySpace::kAny:
      return "ANY";
    case MemorySpace::kVmem:
      return "VMEM";
    case MemorySpace::kSmem:
      return "SMEM";
    case MemorySpace::kSemaphore:
      return "SEMAPHORE";
  }
  return "?";
}

Ref Ref::Make(int slot, std::string name, Shape shape, DType dtype, MemorySpace space,
              SemaphoreType semaphore_type) {
  Ref ref;
  ref.name_ = std::move(name);
  ref.shape_ = std::move(shape);
  ref.dtype_ = dtype;
  ref.space_ = space;
  ref.semaphore_type_ = semaphore_type;
  ref.binding_.slot = slot;
  ref.binding_.strides.assign(ref.shape_.size(), 1);
  for (size_t d = ref.shape_.size(); d-- > 1;)
    ref.binding_.strides[d - 1] = ref.binding_.strides[d] * ref.shape_[d];
  return ref;
}

Ref Ref::Sliced(const std::vector<Slice>& slices) const {
  if (slices.size() > shape_.size()) {
    throw Error(ErrorKind::kOutOfBounds,
                "'" + Describe() + "' has " + std::to_string(shape_.size()) +
                    " dimensions but was indexed with " + std::to_string(slices.size()) + ".");
  }
  Ref out = *this;
  out.shape_.clear();
  out.binding_.strides.clear();
  std::string view;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (d >= slices.size()) {
      out.shape_.push_back(shape_[d]);
      out.binding_.strides.push_back(binding_.strides[d]);
      continue;
    }
    const Slice& s = slices[d];
    if (s.start < 0 || s.size < 0 || s.start + s.size > shape_[d]) {
      throw Error(ErrorKind::kOutOfBounds,
                  "'" + Describe() + "' is sliced out of bounds: dimension " + std::to_string(d) +
                      " has extent " + std::to_string(shape_[d]) + ", but the slice covers [" +
                      std::to_string(s.start) + ", " + std::to_string(s.start + s.size) +
                      "). Keep start >= 0 and start + size <= " + std::to_string(shape_[d]) + ".");
    }
    out.binding_.offset += s.start * binding_.strides[d];
    view += (view.empty() ? "" : ", ") +
            (s.squeeze ? std::to_string(s.start)
                       : "ds(" + std::to_string(s.start) + ", " + std::to_string(s.size) + ")");
    if (!s.squeeze) {
      out.shape_.push_back(s.size);
      out.binding_.strides.push_back(binding_.strides[d]);
    }
  }
  out.view_ = view_ + "[" + view + "]";
  return out;
}

std::string Ref::Describe() const {
  if (is_semaphore() && !view_.empty()) return name_ + view_;
  return view_.empty() ? name_ : name_ + ".at" + view_;
}

}  // namespace tpusim::dsl
