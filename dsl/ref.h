#pragma once

// A Ref names a kernel operand, scratch buffer or semaphore (array) the way Pallas refs
// do: the same Ref means the same buffer on every device, so a remote copy's destination
// is written as the local name of the remote buffer. Slicing with at(...) gives a view.

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/reference_count.h"
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
  Ref(const Ref& other) noexcept : data_(other.data_) { Acquire(data_); }
  Ref(Ref&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  Ref& operator=(const Ref& other) noexcept {
    Ref copy(other);
    std::swap(data_, copy.data_);
    return *this;
  }
  Ref& operator=(Ref&& other) noexcept {
    Ref taken(std::move(other));
    std::swap(data_, taken.data_);
    return *this;
  }
  ~Ref() { Release(data_); }

  // The shape as a std::vector. A view keeps its shape in its block (dims()) and builds this
  // vector the first time something asks for it, so a DMA's views, which only the DSL reads,
  // cost no vector.
  const Shape& shape() const {
    const Shape* vector = data().fresh.shape_vector.load(std::memory_order_acquire);
    return vector ? *vector : ShapeVector();
  }
  // The same extents without a vector: valid while the ref (or a copy of it) lives.
  std::span<const int64_t> dims() const { return {data().dims(), data().rank}; }
  DType dtype() const { return static_cast<DType>(data().dtype); }
  MemorySpace memory_space() const { return static_cast<MemorySpace>(data().space); }
  SemaphoreType semaphore_type() const { return static_cast<SemaphoreType>(data().semaphore_type); }
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
    int64_t start;
    int64_t size;
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
    return {name(), d.viewed, is_semaphore(), {d.view(), d.view_size}};
  }
  // The text Describe() writes for `parts`, appended to `out`.
  static void AppendDescription(const DescriptionParts& parts, std::string& out);

  // A view that runs past the shape of the ref it was sliced from: the error that slicing
  // it would have raised; empty for a view inside the ref.
  const std::string& out_of_bounds() const {
    return data().outside ? data().outside->error : EmptyText();
  }
  // Whether both refs are one block (a copy of a ref, or one view the cache found twice):
  // then they are alike in everything, which a copy's operand checks need not compare.
  bool same_block(const Ref& other) const { return data_ == other.data_; }
  // out_of_bounds().empty(), without the text: every DMA's regions ask.
  bool in_bounds() const { return !data().outside; }
  // The part of an out-of-bounds view inside the ref, as a view of its own, and where it
  // starts in this view; nullopt when no element is inside.
  std::optional<std::pair<Ref, Shape>> InBoundsPart() const;

  // For the DSL's own machinery.
  struct Binding {
    int slot = -1;              // operand or scratch slot of the pallas_call
    int64_t offset = 0;         // elements from the start of the slot's buffer
    uint64_t scope_serial = 0;  // which AllocateScoped made it; 0: not a scoped buffer
  };
  static Ref Make(int slot, std::string name, Shape shape, DType dtype, MemorySpace space,
                  SemaphoreType semaphore_type = SemaphoreType::kDma);
  const Binding& binding() const { return data().binding; }
  // Elements between neighbours, per visible dimension (as dims()).
  std::span<const int64_t> strides() const { return {data().strides(), data().rank}; }
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
  // What a copy of a block (Mutable) does not take: the copy is made to be changed, so
  // what was derived from the original, shape()'s vector and its name in the view cache,
  // starts afresh, and the copy has one reference, its maker's.
  struct Fresh {
    Fresh() = default;
    Fresh(const Fresh& /*original*/) noexcept {}
    Fresh& operator=(const Fresh&) = delete;
    ~Fresh() { delete shape_vector.load(std::memory_order_relaxed); }
    // shape()'s vector: made by Make, or on first use (atomically: copies of a ref on
    // other host threads share the block).
    mutable std::atomic<const Shape*> shape_vector{nullptr};
    // This block's name in the view cache (ViewCache, dsl/ref.cc); 0 until it is sliced.
    // Never that of another block.
    mutable uint64_t view_cache_id = 0;
    mutable std::atomic<uint32_t> references{1};  // the Refs holding the block
  };
  // A ref's one heap block, sized to it: the fields below, then its extents and strides
  // (rank of each) and its view's slices (view_size), in that order: a one-dimensional
  // view of one slice is 128 bytes. As std::vectors the arrays were two or three more
  // blocks per view, each allocated and freed for every DMA a kernel issues; inline, for
  // four dimensions and six slices, a block three times that size, which a kernel holding
  // thousands of DMAs' views at once paid in fresh pages (docs/performance-kernel-side.md).
  struct Data {
    Data() = default;  // made by New: default-initialized, the arrays written by the maker
    Data(const Data&) = default;  // the fields: Copy adds the arrays
    Data& operator=(const Data&) = delete;
    Fresh fresh;
    uint32_t rank = 0;       // dims() and strides()
    uint32_t view_size = 0;  // view()
    // The enums in a byte each, which keeps a one-dimensional view in 128 bytes.
    uint8_t dtype = static_cast<uint8_t>(DType::kF32);
    uint8_t space = static_cast<uint8_t>(MemorySpace::kAny);
    uint8_t semaphore_type = static_cast<uint8_t>(SemaphoreType::kDma);
    // The slices applied so far, for Describe(), kept as numbers: most views are never
    // described (a DMA's label is built from them once), and their text was two heap blocks
    // per DMA. A view of a view copies the slices of the one it slices first, so a long
    // chain of views holds no chain of blocks.
    bool viewed = false;  // at(...) made it: its text has "[...]" per level of slicing
    bool out_of_bounds_views = false;
    Binding binding;
    std::shared_ptr<const std::string> name;  // the same for every view of a buffer
    // Null for a view inside the ref: the rare rest lives apart, so that the block every
    // DMA's views make stays small.
    std::shared_ptr<const OutOfBounds> outside;

    int64_t* dims() { return reinterpret_cast<int64_t*>(this + 1); }
    const int64_t* dims() const { return reinterpret_cast<const int64_t*>(this + 1); }
    int64_t* strides() { return dims() + rank; }
    const int64_t* strides() const { return dims() + rank; }
    ViewSlice* view() { return reinterpret_cast<ViewSlice*>(strides() + rank); }
    const ViewSlice* view() const { return reinterpret_cast<const ViewSlice*>(strides() + rank); }
    static size_t Bytes(size_t rank, size_t view_size) {
      return sizeof(Data) + 2 * rank * sizeof(int64_t) + view_size * sizeof(ViewSlice);
    }
  };
  static_assert(sizeof(ViewSlice) == 2 * sizeof(int64_t) && alignof(Data) == alignof(int64_t));
  // A block with room for `rank` extents and strides and `view_size` slices, the arrays
  // unwritten; one reference.
  static Data* New(size_t rank, size_t view_size) {
    Data* d = new (::operator new(Data::Bytes(rank, view_size))) Data;  // not zeroed
    d->rank = static_cast<uint32_t>(rank);
    d->view_size = static_cast<uint32_t>(view_size);
    return d;
  }
  // The same fields and arrays, in a block of its own.
  static Data* Copy(const Data& original);
  // Counted as a label's source is (base/reference_count.h).
  static void Acquire(const Data* d) noexcept {
    if (d) base::AddReference(d->fresh.references);
  }
  static void Release(Data* d) noexcept {
    if (d && base::DropReference(d->fresh.references)) Delete(d);
  }
  static void Delete(Data* d) noexcept;
  const Data& data() const { return data_ ? *data_ : EmptyData(); }
  // A slice as a view keeps it (and the view cache's key): an index's size is -1.
  static ViewSlice ViewSliceOf(const Slice& s) { return {s.start, s.squeeze ? -1 : s.size}; }
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

  Data* data_ = nullptr;  // copy-on-write: Mutable() copies a shared block first
};

}  // namespace tpusim::dsl
