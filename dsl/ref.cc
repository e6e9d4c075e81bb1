#include "dsl/ref.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <cstring>
#include <new>

#include "base/errors.h"
#include "base/text.h"

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
  ref.data_ = New(shape.size(), 0);
  Data& d = *ref.data_;
  d.name = std::make_shared<const std::string>(std::move(name));
  std::copy(shape.begin(), shape.end(), d.dims());
  d.dtype = static_cast<uint8_t>(dtype);
  d.space = static_cast<uint8_t>(space);
  d.semaphore_type = static_cast<uint8_t>(semaphore_type);
  d.binding.slot = slot;
  int64_t* strides = d.strides();
  for (size_t i = shape.size(); i-- > 0;)
    strides[i] = i + 1 == shape.size() ? 1 : strides[i + 1] * shape[i + 1];
  // An operand's or scratch buffer's shape is read by kernels (shape()) again and again:
  // its vector is the one it was made with.
  d.fresh.shape_vector.store(new Shape(std::move(shape)), std::memory_order_release);
  return ref;
}

Ref::Data* Ref::Copy(const Data& original) {
  Data* copy = new (::operator new(Data::Bytes(original.rank, original.view_size))) Data(original);
  std::memcpy(copy->dims(), original.dims(),
              Data::Bytes(original.rank, original.view_size) - sizeof(Data));
  return copy;
}

void Ref::Delete(Data* d) noexcept {
  const size_t bytes = Data::Bytes(d->rank, d->view_size);
  d->~Data();
#if defined(__cpp_sized_deallocation)
  ::operator delete(d, bytes);  // sized: the allocator need not look the block up
#else
  // clang before 19 leaves sized deallocation off unless asked (-fsized-deallocation).
  static_cast<void>(bytes);
  ::operator delete(d);
#endif
}

const Shape& Ref::ShapeVector() const {
  const Data& d = data();
  static const Shape kNoDims;
  if (d.rank == 0) return kNoDims;  // a scalar, or one semaphore of an array
  const Shape* made = new Shape(d.dims(), d.dims() + d.rank);
  const Shape* expected = nullptr;
  if (d.fresh.shape_vector.compare_exchange_strong(expected, made, std::memory_order_acq_rel))
    return *made;
  delete made;  // another thread made it first
  return *expected;
}

Ref::Data& Ref::Mutable() {
  if (!data_) {
    data_ = New(0, 0);
  } else if (data_->fresh.references.load(std::memory_order_acquire) > 1) {
    Data* copy = Copy(*data_);
    Release(data_);
    data_ = copy;
  }
  data_->fresh.view_cache_id = 0;  // changed in place: views cached under its old id are stale
  return *data_;
}

// Kernels slice the same refs the same way step after step (a ring's slot [parity][chunk],
// its semaphores), on every device: the call's operand and scratch refs are shared by all
// of them. So the views made last are kept, by the block they slice and the slices, and
// the same view again is one more reference to the same block: no allocation, no free. A
// view is immutable (a change copies it first, Mutable), so sharing it is safe. Direct-mapped
// over kEntries views, which it keeps alive until another view takes the entry.
//
// Used only while the process has one host thread (like base::Label's counts), since the
// table is shared; a process with more threads makes every view anew. Blocks have ids, not
// addresses, as keys: a freed block's address may come back as another's.
class Ref::ViewCache {
 public:
  // 1024 entries (90 KiB): all_gather_nd's views of its output are shared by the devices
  // with the same coordinates on the axes a share has not gathered yet, and on a pod half
  // of them were evicted before the next such device asked with 256; 4096 cost more in
  // misses on the table than they saved (measured on a 2,048-chip v5p run).
  static constexpr int kEntriesLog2 = 10;
  static constexpr size_t kEntries = size_t{1} << kEntriesLog2;
  static constexpr size_t kKeySlices = 4;  // views of more slices are not kept
  struct Entry {
    Entry() = default;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() { Release(view); }
    uint64_t parent = 0;        // the sliced block's view_cache_id; 0: empty
    uint32_t count = 0;         // slices given
    ViewSlice key[kKeySlices];  // as the view keeps them (ViewSliceOf)
    Data* view = nullptr;       // one reference
  };

  static bool Usable() { return base::SingleThreadedProcess(); }
  // The hash's multiplier and its powers (mod 2^64), up to those a key of kKeySlices needs.
  static constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ull;
  static constexpr std::array<uint64_t, 2 * kKeySlices + 2> kPowers = [] {
    std::array<uint64_t, 2 * kKeySlices + 2> powers{};
    powers[0] = 1;
    for (size_t i = 1; i < powers.size(); ++i)
      powers[i] = powers[i - 1] * kMultiplier;
    return powers;
  }();
  // The entry for `slices` of `parent`: the view when it holds it (hit), or the one to
  // replace with it.
  static Entry& Find(const Data& parent, std::span<const Slice> slices, bool& hit) {
    if (parent.fresh.view_cache_id == 0) parent.fresh.view_cache_id = ++next_id_;
    const uint64_t id = parent.fresh.view_cache_id;
    // A polynomial in the multiplier, each term with a power of its own: as (h + start) * K,
    // the block's id and the first start shared one, and a.at(i + 1, ...) took the entry of
    // b.at(i, ...) for the next block b: a kernel slicing two semaphore arrays alike (a
    // copy's send and receive semaphores) evicted each of its views with the next.
    // Summed term by term with the powers precomputed: as Horner's rule, ((h K + start) K
    // + size) per slice, it was a chain of eight dependent multiplications per view.
    const size_t m = slices.size();
    uint64_t h = id * kPowers[2 * m + 1];
    for (size_t d = 0; d < m; ++d) {
      const size_t power = 2 * (m - d);
      h += static_cast<uint64_t>(slices[d].start) * kPowers[power] +
           static_cast<uint64_t>(ViewSliceOf(slices[d]).size) * kPowers[power - 1];
    }
    Entry& e = table_[h >> (64 - kEntriesLog2)];
    hit = e.parent == id && e.count == slices.size();
    for (size_t d = 0; hit && d < slices.size(); ++d) {
      const ViewSlice key = ViewSliceOf(slices[d]);
      hit = e.key[d].start == key.start && e.key[d].size == key.size;
    }
    return e;
  }
  static void Store(Entry& e, const Data& parent, std::span<const Slice> slices, Data* view) {
    e.parent = parent.fresh.view_cache_id;
    e.count = static_cast<uint32_t>(slices.size());
    for (size_t d = 0; d < slices.size(); ++d)
      e.key[d] = ViewSliceOf(slices[d]);
    Acquire(view);
    Release(e.view);
    e.view = view;
  }

 private:
  static uint64_t next_id_;
  static Entry table_[kEntries];
};
uint64_t Ref::ViewCache::next_id_ = 0;
Ref::ViewCache::Entry Ref::ViewCache::table_[Ref::ViewCache::kEntries];

const Ref::Data& Ref::EmptyData() {
  static const Data empty;
  return empty;
}

const std::string& Ref::EmptyText() {
  static const std::string empty;
  return empty;
}

namespace {

// Out of line and cold: the hot path of slicing builds no message.
[[gnu::cold, gnu::noinline]] std::string OutOfBoundsMessage(const std::string& ref, size_t dim,
                                                            int64_t extent, const Slice& s,
                                                            bool end_fits, bool offset_fits) {
  const std::string covers =
      !end_fits ? "starts at " + std::to_string(s.start) + " with size " + std::to_string(s.size) +
                      ", whose end does not fit in int64"
      : !offset_fits
          ? "starts at " + std::to_string(s.start) +
                ", whose place in the buffer does not fit in int64"
          : "covers [" + std::to_string(s.start) + ", " + std::to_string(s.start + s.size) + ")";
  return "'" + ref + "' is sliced out of bounds: dimension " + std::to_string(dim) +
         " has extent " + std::to_string(extent) + ", but the slice " + covers +
         ". Keep start >= 0 and start + size <= " + std::to_string(extent) + ".";
}

// What a view keeps of the ref it views: its name, types and buffer slot. (A template over
// Ref's private block type, which the members that call it name.)
template <typename Data>
void KeepOfTheViewed(const Data& in, Data& out) {
  out.name = in.name;
  out.dtype = in.dtype;
  out.space = in.space;
  out.semaphore_type = in.semaphore_type;
  out.binding.slot = in.binding.slot;
  out.binding.scope_serial = in.binding.scope_serial;
}

// Appends `value` as std::to_string writes it, without a temporary string.
void AppendInt(std::string& out, int64_t value) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

}  // namespace

// Every DMA slices its refs: most views are found in the cache, the rest made by MakeView.
// A view that raises is never kept.
Ref Ref::Sliced(std::span<const Slice> slices) const {
  if (!data_ || slices.size() > ViewCache::kKeySlices || !ViewCache::Usable())
    return MakeView(slices);
  bool hit = false;
  ViewCache::Entry& entry = ViewCache::Find(*data_, slices, hit);
  Ref view;
  if (hit) {
    view.data_ = entry.view;
    Acquire(view.data_);
  } else {
    // The view this entry held is released below, and on a pod its block is long out of the
    // cache: its line is asked for now, to arrive while the new view is made.
    if (entry.view) __builtin_prefetch(&entry.view->fresh.references, 1);
    view = MakeView(slices);
    ViewCache::Store(entry, *data_, slices, view.data_);
  }
  return view;
}

namespace {

// The extents a view of `rank` dimensions keeps: those the slices' indices do not drop.
size_t KeptRank(size_t rank, std::span<const Slice> slices) {
  for (const Slice& s : slices)
    rank -= s.squeeze ? 1 : 0;
  return rank;
}

}  // namespace

// The common case (a view inside a ref that raises on a slice past its shape) writes its
// one block's arrays in one pass, with no check of their capacity per element, and keeps
// the slices as numbers: the view's text is written only when something describes it.
// Anything else, errors included, takes the general path.
Ref Ref::MakeView(std::span<const Slice> slices) const {
  const Data& in = data();
  const size_t rank = in.rank;
  if (in.outside || in.out_of_bounds_views || slices.size() > rank)
    return SlicedTrackingInside(slices);
  // The view's own slices follow those of the view it slices, after a level's end.
  const size_t level = in.viewed ? in.view_size + 1 : 0;
  Ref result;
  result.data_ = New(KeptRank(rank, slices), level + slices.size());
  Data& out = *result.data_;
  KeepOfTheViewed(in, out);
  out.viewed = true;
  int64_t* dims = out.dims();
  int64_t* strides = out.strides();
  const int64_t* shape = in.dims();
  const int64_t* in_strides = in.strides();
  ViewSlice* view = out.view();
  if (in.viewed) {
    std::copy(in.view(), in.view() + in.view_size, view);
    view[level - 1] = {0, kLevelEnd};
    view += level;
  }
  int64_t offset = in.binding.offset;
  size_t kept = 0;
  for (size_t d = 0; d < slices.size(); ++d) {
    const Slice& s = slices[d];
    // start + size <= extent, both >= 0, so the end fits in int64 too.
    int64_t step = 0;
    if (s.start < 0 || s.size < 0 || s.start > shape[d] - s.size ||
        __builtin_mul_overflow(s.start, in_strides[d], &step) ||
        __builtin_add_overflow(offset, step, &offset))
      return SlicedTrackingInside(slices);  // raises
    view[d] = ViewSliceOf(s);
    if (!s.squeeze) {
      dims[kept] = s.size;
      strides[kept++] = in_strides[d];
    }
  }
  for (size_t d = slices.size(); d < rank; ++d) {
    dims[kept] = shape[d];
    strides[kept++] = in_strides[d];
  }
  out.binding.offset = offset;
  return result;
}

// The general case: a ref that is out of bounds already, or may make out-of-bounds views,
// tracks which of its indices are inside; for any other ref it raises the error of a slice
// past its shape (Sliced calls it for that).
Ref Ref::SlicedTrackingInside(std::span<const Slice> slices) const {
  const Data& in = data();
  const size_t rank = in.rank;
  if (slices.size() > rank) {
    throw Error(ErrorKind::kOutOfBounds, "'" + Describe() + "' has " + std::to_string(rank) +
                                             " dimensions but was indexed with " +
                                             std::to_string(slices.size()) + ".");
  }
  const size_t level = in.viewed ? in.view_size + 1 : 0;
  Ref result;
  result.data_ = New(KeptRank(rank, slices), level + slices.size());
  Data& out = *result.data_;
  KeepOfTheViewed(in, out);
  out.binding.offset = in.binding.offset;
  out.out_of_bounds_views = in.out_of_bounds_views;
  int64_t* out_dims = out.dims();
  int64_t* out_strides = out.strides();
  size_t kept = 0;
  const int64_t* shape = in.dims();
  const int64_t* strides = in.strides();
  const OutOfBounds* was_outside = in.outside.get();
  // Only a ref that is outside already, or may make out-of-bounds views, needs to know
  // which of its indices are inside; any other view past its shape throws.
  const bool track_inside = was_outside || in.out_of_bounds_views;
  OutOfBounds outside;  // this view's, built only when track_inside
  if (was_outside) {
    outside.error = was_outside->error;
    outside.none_inside = was_outside->none_inside;
  }
  out.viewed = true;
  ViewSlice* view = out.view();
  if (in.viewed) {
    std::copy(in.view(), in.view() + in.view_size, view);
    view[level - 1] = {0, kLevelEnd};
    view += level;
  }
  for (size_t d = 0; d < rank; ++d) {
    // The indices of this dimension inside the ref.
    const int64_t lo = was_outside ? was_outside->inside_lo[d] : 0;
    const int64_t hi = was_outside ? was_outside->inside_hi[d] : shape[d];
    if (d >= slices.size()) {
      out_dims[kept] = shape[d];
      out_strides[kept++] = strides[d];
      if (track_inside) {
        outside.inside_lo.push_back(lo);
        outside.inside_hi.push_back(hi);
      }
      continue;
    }
    const Slice& s = slices[d];
    // Overflow-safe: start + size is formed only once it is known to fit.
    int64_t end = 0;
    const bool end_fits = !__builtin_add_overflow(s.start, s.size, &end);
    int64_t step = 0;  // s.start elements of this dimension, in elements of the buffer
    const bool offset_fits = !__builtin_mul_overflow(s.start, strides[d], &step) &&
                             !__builtin_add_overflow(out.binding.offset, step, &step);
    if (s.start < 0 || s.size < 0 || s.start > shape[d] - s.size || !end_fits || !offset_fits) {
      std::string error = OutOfBoundsMessage(Describe(), d, shape[d], s, end_fits, offset_fits);
      // Only a view whose every index is an int64 can stand for a read of uninitialized
      // memory; the rest is refused in every mode.
      if (!in.out_of_bounds_views || s.size < 0 || !end_fits || !offset_fits)
        throw Error(ErrorKind::kOutOfBounds, error);
      if (outside.error.empty()) outside.error = std::move(error);
    }
    out.binding.offset = step;
    view[d] = ViewSliceOf(s);
    if (s.squeeze) {
      if (track_inside) outside.none_inside = outside.none_inside || s.start < lo || s.start >= hi;
    } else {
      out_dims[kept] = s.size;
      out_strides[kept++] = strides[d];
      if (track_inside) {
        // In 128 bits: a start far below 0 would overflow lo - start.
        const auto inside = [&](int64_t index) {
          return static_cast<int64_t>(std::clamp<__int128>(__int128{index} - s.start, 0, s.size));
        };
        outside.inside_lo.push_back(inside(lo));
        outside.inside_hi.push_back(inside(hi));
      }
    }
  }
  if (outside.error.empty()) return result;
  // A view of an out-of-bounds view may lie inside the ref again.
  bool inside = !outside.none_inside;
  for (size_t d = 0; inside && d < out.rank; ++d)
    inside = outside.inside_lo[d] == 0 && outside.inside_hi[d] == out_dims[d];
  if (!inside) out.outside = std::make_shared<const OutOfBounds>(std::move(outside));
  return result;
}

std::optional<std::pair<Ref, Shape>> Ref::InBoundsPart() const {
  const Data& in = data();
  const size_t rank = in.rank;
  if (!in.outside) return std::make_pair(*this, Shape(rank, 0));
  const OutOfBounds& outside = *in.outside;
  if (outside.none_inside) return std::nullopt;
  for (size_t d = 0; d < rank; ++d)
    if (outside.inside_lo[d] >= outside.inside_hi[d]) return std::nullopt;
  Ref part = *this;
  Data& p = part.Mutable();  // a copy of the shared block: no shape vector yet
  for (size_t d = 0; d < rank; ++d) {
    p.dims()[d] = outside.inside_hi[d] - outside.inside_lo[d];
    // The sum lies inside the buffer; its terms may not fit alone (a view far before it).
    p.binding.offset = static_cast<int64_t>(static_cast<uint64_t>(p.binding.offset) +
                                            static_cast<uint64_t>(outside.inside_lo[d]) *
                                                static_cast<uint64_t>(in.strides()[d]));
  }
  Shape lo = outside.inside_lo;  // a copy: the part's block keeps no out-of-bounds fields
  p.outside = nullptr;
  return std::make_pair(part, std::move(lo));
}

std::string Ref::Describe() const {
  std::string text;
  AppendDescription(text);
  return text;
}

void Ref::AppendDescription(std::string& out) const {
  AppendDescription(description_parts(), out);
}

// "name.at[ds(64, 64), 3]", with "[...]" per level of slicing, the outermost view's last.
void Ref::AppendDescription(const DescriptionParts& parts, std::string& out) {
  out += parts.name;
  if (!parts.viewed) return;
  if (!parts.semaphore) out += ".at";
  out += '[';
  bool first = true;
  for (const ViewSlice& s : parts.view) {
    if (s.size == kLevelEnd) {
      out += "][";
      first = true;
      continue;
    }
    if (!first) out += ", ";
    first = false;
    if (s.size < 0) {
      AppendInt(out, s.start);
    } else {
      out += "ds(";
      AppendInt(out, s.start);
      out += ", ";
      AppendInt(out, s.size);
      out += ')';
    }
  }
  out += ']';
}

}  // namespace tpusim::dsl
