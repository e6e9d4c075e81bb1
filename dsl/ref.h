#pragma once

// A Ref names a kernel operand, scratch buffer or semaphore (array) the way Pallas refs
// do: the same Ref means the same buffer on every device, so a remote copy's destination
// is written as the local name of the remote buffer. Slicing with at(...) gives a view.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/inline_vector.h"
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

// A Ref is a handle: its fields live in one immutable block that copies share, so the
// copies a DMA descriptor keeps (source, destination, semaphores) cost a reference count,
// not the name, shape and strides again. Only slicing makes a new block.
class Ref {
 public:
  Ref() = default;

  // The shape as a std::vector. A view keeps its shape inline (dims()) and builds this
  // vector the first time something asks for it, so a DMA's views, which only the DSL reads,
  // cost no vector.
  const Shape& shape() const {
    const Shape* vector = data().shape_vector.load(std::memory_order_acquire);
    return vector ? *vector : ShapeVector();
  }
  // A view of up to kInlineRank dimensions (and kInlineViewSlices slices, over all its
  // levels) is one heap block; past that its arrays spill to blocks of their own.
  static constexpr size_t kInlineRank = 4;
  static constexpr size_t kInlineViewSlices = 6;  // a view of a view of rank 2 still fits
  // The same extents without a vector: valid while the ref (or a copy of it) lives.
  std::span<const int64_t> dims() const { return {data().dims.data(), data().dims.size()}; }
  DType dtype() const { return data().dtype; }
  MemorySpace memory_space() const { return data().space; }
  SemaphoreType semaphore_type() const { return data().semaphore_type; }
  bool is_semaphore() const { return memory_space() == MemorySpace::kSemaphore; }
  const std::string& name() const { return data().name ? *data().name : EmptyText(); }
  int64_t size() const {
    int64_t n = 1;
    for (const int64_t d : dims())
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) return NumElements(shape());  // throws
    return n;
  }
  // Saturates at UINT64_MAX: no buffer that large can be allocated.
  uint64_t nbytes() const {
    uint64_t n = 0;
    return __builtin_mul_overflow(static_cast<uint64_t>(size()), SizeOf(dtype()), &n) ? ~uint64_t{0}
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
  // The same, appended to `out`.
  void AppendDescription(std::string& out) const;

  // One slice of a view, as its text needs it: size -1 is an index that drops the dimension,
  // size -2 (kLevelEnd) ends one level of slicing ("][" in the text).
  static constexpr int64_t kLevelEnd = -2;
  struct ViewSlice {
    int64_t start;  // no initializers: a member type of Ref must be default constructible
    int64_t size;   // inside Ref's own definition, for InlineVector's check
  };
  // What Describe() is written from, borrowed from the ref: a DMA's label copies these and
  // writes its text only if something reads it (dsl/copy_label.h).
  struct DescriptionParts {
    std::string_view name;
    bool viewed = false;     // at(...) made it: "[...]" per level of slicing follows the name
    bool semaphore = false;  // a semaphore's view has no ".at": "recv_sems[2]"
    std::span<const ViewSlice> view;
  };
  DescriptionParts description_parts() const {
    const Data& d = data();
    return {name(), d.viewed, is_semaphore(), {d.view.data(), d.view.size()}};
  }
  // The text Describe() writes for `parts`, appended to `out`.
  static void AppendDescription(const DescriptionParts& parts, std::string& out);

  // A view that runs past the shape of the ref it was sliced from: the error that slicing
  // it would have raised; empty for a view inside the ref.
  const std::string& out_of_bounds() const {
    return data().outside ? data().outside->error : EmptyText();
  }
  // The part of an out-of-bounds view inside the ref, as a view of its own, and where it
  // starts in this view; nullopt when no element is inside.
  std::optional<std::pair<Ref, Shape>> InBoundsPart() const;

  // For the DSL's own machinery.
  struct Binding {
    int slot = -1;       // operand or scratch slot of the pallas_call
    int64_t offset = 0;  // elements from the start of the slot's buffer
    // Elements, per visible dimension; inline for up to four (every DMA slices two refs).
    base::InlineVector<int64_t, 4> strides;
    uint64_t scope_serial = 0;  // which AllocateScoped made it; 0: not a scoped buffer
  };
  static Ref Make(int slot, std::string name, Shape shape, DType dtype, MemorySpace space,
                  SemaphoreType semaphore_type = SemaphoreType::kDma);
  const Binding& binding() const { return data().binding; }
  // Slices past the shape of this ref, and of views of it, make out-of-bounds views
  // instead of raising (a buffer ref of a run whose out_of_bounds_reads is kUninitialized).
  void AllowOutOfBoundsViews(bool allow) {
    const bool views = allow && !is_semaphore();
    if (views != data().out_of_bounds_views) Mutable().out_of_bounds_views = views;
  }
  void MarkScoped(uint64_t serial) { Mutable().binding.scope_serial = serial; }

 private:
  // A view past the ref's shape: the error slicing it would have raised, and per dimension
  // the indices [lo, hi) inside the ref; none_inside when a dropped dimension's index was
  // outside it.
  struct OutOfBounds {
    std::string error;
    Shape inside_lo, inside_hi;
    bool none_inside = false;
  };
  // A view's block is the one heap block slicing makes: its extents, strides and slices
  // live inline (kInlineRank). As std::vectors (and a view of four slices) they were two or
  // three more blocks per view, each allocated and freed for every DMA a kernel issues.
  struct Data {
    // User-provided, so make_shared<Data>() runs the member initializers only: with the
    // implicit constructor it first zeroes the whole block (value-initialization), a cost
    // every view of every DMA paid for fields the initializers set anyway.
    Data() {}  // NOLINT(modernize-use-equals-default): "= default" would bring the zeroing back
    // A copy (Mutable) builds its own shape vector when asked: the fields may change.
    Data(const Data& other);
    Data& operator=(const Data&) = delete;
    ~Data() { delete shape_vector.load(std::memory_order_relaxed); }
    std::shared_ptr<const std::string> name;  // the same for every view of a buffer
    // The slices applied so far, for Describe(), kept as numbers: most views are never
    // described (a DMA's label is built from them once), and their text was two heap blocks
    // per DMA. A view of a view copies the slices of the one it slices first, so a long
    // chain of views holds no chain of blocks.
    bool viewed = false;  // at(...) made it: its text has "[...]" per level of slicing
    base::InlineVector<ViewSlice, kInlineViewSlices> view;
    base::InlineVector<int64_t, kInlineRank> dims;  // the shape
    // shape()'s vector: made by Make, or on first use (atomically: copies of a ref on
    // other host threads share the block).
    mutable std::atomic<const Shape*> shape_vector{nullptr};
    // This block's name in the view cache (ViewCache, dsl/ref.cc); 0 until it is sliced.
    // Never that of another block, and reset when the block changes (Mutable).
    mutable uint64_t view_cache_id = 0;
    DType dtype = DType::kF32;
    MemorySpace space = MemorySpace::kAny;
    SemaphoreType semaphore_type = SemaphoreType::kDma;
    Binding binding;
    bool out_of_bounds_views = false;
    // Null for a view inside the ref: the rare rest lives apart, so that the block every
    // DMA's views make stays small.
    std::shared_ptr<const OutOfBounds> outside;
  };
  const Data& data() const { return data_ ? *data_ : EmptyData(); }
  // A new view (Sliced finds the views it made before in its cache).
  Ref MakeView(std::span<const Slice> slices) const;
  // MakeView's general case: views of refs that may run past their shape, and errors.
  Ref SlicedTrackingInside(std::span<const Slice> slices) const;
  // shape() the first time: the vector of dims(), kept in the block.
  const Shape& ShapeVector() const;
  // The block of this ref alone, copied first when another ref shares it.
  Data& Mutable();
  class ViewCache;
  static const Data& EmptyData();
  static const std::string& EmptyText();

  std::shared_ptr<Data> data_;  // copy-on-write: Mutable() copies a shared block first
};

}  // namespace tpusim::dsl
