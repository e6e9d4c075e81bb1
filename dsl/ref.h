#pragma once

// A Ref names a kernel operand, scratch buffer or semaphore (array) the way Pallas refs
// do: the same Ref means the same buffer on every device, so a remote copy's destination
// is written as the local name of the remote buffer. Slicing with at(...) gives a view.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dsl/array.h"
#include "dsl/dtype.h"

namespace tpusim::dsl {

// Where an operand lives. ANY leaves it in HBM, reachable only by DMA.
enum class MemorySpace { kAny, kVmem, kSmem, kSemaphore };
const char* MemorySpaceName(MemorySpace space);  // "ANY", "VMEM", "SMEM", "SEMAPHORE"

enum class SemaphoreType { kDma, kRegular, kBarrier };

// One index of Ref::at: a range ds(start, size), or a single integer that drops the
// dimension (as ref.at[i] does in Pallas).
struct Slice {
  int64_t start = 0;
  int64_t size = 1;
  bool squeeze = false;
  Slice(int64_t index) : start(index), size(1), squeeze(true) {}  // NOLINT: implicit like Pallas
  Slice(int index) : Slice(static_cast<int64_t>(index)) {}        // NOLINT
  Slice(int64_t start_, int64_t size_, bool squeeze_)
      : start(start_), size(size_), squeeze(squeeze_) {}
};
inline Slice ds(int64_t start, int64_t size) {
  return Slice(start, size, false);
}

class Ref {
 public:
  Ref() = default;

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  MemorySpace memory_space() const { return space_; }
  SemaphoreType semaphore_type() const { return semaphore_type_; }
  bool is_semaphore() const { return space_ == MemorySpace::kSemaphore; }
  const std::string& name() const { return name_; }
  int64_t size() const { return NumElements(shape_); }
  // Saturates at UINT64_MAX: no buffer that large can be allocated.
  uint64_t nbytes() const {
    uint64_t n = 0;
    return __builtin_mul_overflow(static_cast<uint64_t>(size()), SizeOf(dtype_), &n) ? ~uint64_t{0}
                                                                                     : n;
  }

  // A view: one Slice per leading dimension; dimensions not given are taken whole.
  // Throws Error(kOutOfBounds) naming the ref, the dimension and its extent; unless the
  // ref reads out of bounds as uninitialized memory (RunOptions::out_of_bounds_reads), in
  // which case the view remembers the error for anything but a read (out_of_bounds()).
  template <typename... S>
  Ref at(const S&... slices) const {
    if constexpr (sizeof...(S) == 0) {
      return Sliced({});
    } else {
      const Slice list[] = {Slice(slices)...};  // on the stack: a DMA's views cost no list
      return Sliced(list);
    }
  }
  Ref Sliced(std::span<const Slice> slices) const;

  // "x", "out.at[ds(64, 64)]", "recv_sems[2]": used in errors and trace names.
  std::string Describe() const;

  // A view that runs past the shape of the ref it was sliced from: the error that slicing
  // it would have raised; empty for a view inside the ref.
  const std::string& out_of_bounds() const { return out_of_bounds_; }
  // The part of an out-of-bounds view inside the ref, as a view of its own, and where it
  // starts in this view; nullopt when no element is inside.
  std::optional<std::pair<Ref, Shape>> InBoundsPart() const;

  // For the DSL's own machinery.
  struct Binding {
    int slot = -1;                 // operand or scratch slot of the pallas_call
    int64_t offset = 0;            // elements from the start of the slot's buffer
    std::vector<int64_t> strides;  // elements, per visible dimension
    uint64_t scope_serial = 0;     // which AllocateScoped made it; 0: not a scoped buffer
  };
  static Ref Make(int slot, std::string name, Shape shape, DType dtype, MemorySpace space,
                  SemaphoreType semaphore_type = SemaphoreType::kDma);
  const Binding& binding() const { return binding_; }
  // Slices past the shape of this ref, and of views of it, make out-of-bounds views
  // instead of raising (a buffer ref of a run whose out_of_bounds_reads is kUninitialized).
  void AllowOutOfBoundsViews(bool allow) { out_of_bounds_views_ = allow && !is_semaphore(); }
  void MarkScoped(uint64_t serial) { binding_.scope_serial = serial; }

 private:
  std::string name_;
  std::string view_;  // the slices applied so far, for Describe()
  Shape shape_;
  DType dtype_ = DType::kF32;
  MemorySpace space_ = MemorySpace::kAny;
  SemaphoreType semaphore_type_ = SemaphoreType::kDma;
  Binding binding_;
  bool out_of_bounds_views_ = false;
  std::string out_of_bounds_;
  // Out-of-bounds views: per dimension, the indices [lo, hi) inside the ref; none_inside
  // when a dropped dimension's index was outside it.
  Shape inside_lo_, inside_hi_;
  bool none_inside_ = false;
};

}  // namespace tpusim::dsl
