#include "dsl/ref.h"

#include <algorithm>
#include <charconv>

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
  Data& d = ref.Mutable();
  d.name = std::make_shared<const std::string>(std::move(name));
  d.shape = std::move(shape);
  d.dtype = dtype;
  d.space = space;
  d.semaphore_type = semaphore_type;
  d.binding.slot = slot;
  d.binding.strides.assign(d.shape.size(), 1);
  for (size_t i = d.shape.size(); i-- > 1;)
    d.binding.strides[i - 1] = d.binding.strides[i] * d.shape[i];
  return ref;
}

Ref::Data& Ref::Mutable() {
  if (!data_)
    data_ = std::make_shared<Data>();
  else if (data_.use_count() > 1)
    data_ = std::make_shared<Data>(*data_);
  return *data_;
}

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

// Appends `value` as std::to_string writes it, without a temporary string.
void AppendInt(std::string& out, int64_t value) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

}  // namespace

// Every DMA slices its refs, so this builds the view field by field (no copy of vectors it
// would clear), tracks the inside of the ref only when a view may run past it, and keeps
// the slices as numbers: the view's text is written only when something describes it.
Ref Ref::Sliced(std::span<const Slice> slices) const {
  const Data& in = data();
  const Shape& shape = in.shape;
  if (slices.size() > shape.size()) {
    throw Error(ErrorKind::kOutOfBounds,
                "'" + Describe() + "' has " + std::to_string(shape.size()) +
                    " dimensions but was indexed with " + std::to_string(slices.size()) + ".");
  }
  Ref result;
  result.data_ = std::make_shared<Data>();
  Data& out = *result.data_;
  out.name = in.name;
  out.dtype = in.dtype;
  out.space = in.space;
  out.semaphore_type = in.semaphore_type;
  out.binding.slot = in.binding.slot;
  out.binding.offset = in.binding.offset;
  out.binding.scope_serial = in.binding.scope_serial;
  out.out_of_bounds_views = in.out_of_bounds_views;
  out.shape.reserve(shape.size());
  out.binding.strides.reserve(shape.size());
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
  if (in.viewed) {
    out.view.reserve(in.view.size() + 1 + slices.size());
    out.view = in.view;
    out.view.push_back({0, kLevelEnd});
  } else {
    out.view.reserve(slices.size());
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    // The indices of this dimension inside the ref.
    const int64_t lo = was_outside ? was_outside->inside_lo[d] : 0;
    const int64_t hi = was_outside ? was_outside->inside_hi[d] : shape[d];
    if (d >= slices.size()) {
      out.shape.push_back(shape[d]);
      out.binding.strides.push_back(in.binding.strides[d]);
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
    const bool offset_fits = !__builtin_mul_overflow(s.start, in.binding.strides[d], &step) &&
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
    out.view.push_back({s.start, s.squeeze ? -1 : s.size});
    if (s.squeeze) {
      if (track_inside) outside.none_inside = outside.none_inside || s.start < lo || s.start >= hi;
    } else {
      out.shape.push_back(s.size);
      out.binding.strides.push_back(in.binding.strides[d]);
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
  for (size_t d = 0; inside && d < out.shape.size(); ++d)
    inside = outside.inside_lo[d] == 0 && outside.inside_hi[d] == out.shape[d];
  if (!inside) out.outside = std::make_shared<const OutOfBounds>(std::move(outside));
  return result;
}

std::optional<std::pair<Ref, Shape>> Ref::InBoundsPart() const {
  const Data& in = data();
  if (!in.outside) return std::make_pair(*this, Shape(in.shape.size(), 0));
  const OutOfBounds& outside = *in.outside;
  if (outside.none_inside) return std::nullopt;
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (outside.inside_lo[d] >= outside.inside_hi[d]) return std::nullopt;
  Ref part = *this;
  Data& p = part.Mutable();
  for (size_t d = 0; d < in.shape.size(); ++d) {
    p.shape[d] = outside.inside_hi[d] - outside.inside_lo[d];
    // The sum lies inside the buffer; its terms may not fit alone (a view far before it).
    p.binding.offset = static_cast<int64_t>(static_cast<uint64_t>(p.binding.offset) +
                                            static_cast<uint64_t>(outside.inside_lo[d]) *
                                                static_cast<uint64_t>(in.binding.strides[d]));
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
