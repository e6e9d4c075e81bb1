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

}  // namespace

namespace {

// Appends `value` as std::to_string writes it, without a temporary string.
void AppendInt(std::string& out, int64_t value) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

}  // namespace

// Every DMA slices its refs, so this builds the view field by field (no copy of vectors it
// would clear), tracks the inside of the ref only when a view may run past it, and writes
// the view's text in one string.
Ref Ref::Sliced(std::span<const Slice> slices) const {
  if (slices.size() > shape_.size()) {
    throw Error(ErrorKind::kOutOfBounds,
                "'" + Describe() + "' has " + std::to_string(shape_.size()) +
                    " dimensions but was indexed with " + std::to_string(slices.size()) + ".");
  }
  Ref out;
  out.name_ = name_;
  out.dtype_ = dtype_;
  out.space_ = space_;
  out.semaphore_type_ = semaphore_type_;
  out.binding_.slot = binding_.slot;
  out.binding_.offset = binding_.offset;
  out.binding_.scope_serial = binding_.scope_serial;
  out.out_of_bounds_views_ = out_of_bounds_views_;
  out.out_of_bounds_ = out_of_bounds_;
  out.none_inside_ = none_inside_;
  out.shape_.reserve(shape_.size());
  out.binding_.strides.reserve(shape_.size());
  const bool was_outside = !out_of_bounds_.empty();
  // Only a ref that is outside already, or may make out-of-bounds views, needs to know
  // which of its indices are inside; any other view past its shape throws.
  const bool track_inside = was_outside || out_of_bounds_views_;
  std::string& view = out.view_;
  view.reserve(view_.size() + 2 + 24 * slices.size());
  view = view_;
  view += '[';
  for (size_t d = 0; d < shape_.size(); ++d) {
    // The indices of this dimension inside the ref.
    const int64_t lo = was_outside ? inside_lo_[d] : 0;
    const int64_t hi = was_outside ? inside_hi_[d] : shape_[d];
    if (d >= slices.size()) {
      out.shape_.push_back(shape_[d]);
      out.binding_.strides.push_back(binding_.strides[d]);
      if (track_inside) {
        out.inside_lo_.push_back(lo);
        out.inside_hi_.push_back(hi);
      }
      continue;
    }
    const Slice& s = slices[d];
    // Overflow-safe: start + size is formed only once it is known to fit.
    int64_t end = 0;
    const bool end_fits = !__builtin_add_overflow(s.start, s.size, &end);
    int64_t step = 0;  // s.start elements of this dimension, in elements of the buffer
    const bool offset_fits = !__builtin_mul_overflow(s.start, binding_.strides[d], &step) &&
                             !__builtin_add_overflow(out.binding_.offset, step, &step);
    if (s.start < 0 || s.size < 0 || s.start > shape_[d] - s.size || !end_fits || !offset_fits) {
      const std::string error =
          OutOfBoundsMessage(Describe(), d, shape_[d], s, end_fits, offset_fits);
      // Only a view whose every index is an int64 can stand for a read of uninitialized
      // memory; the rest is refused in every mode.
      if (!out_of_bounds_views_ || s.size < 0 || !end_fits || !offset_fits)
        throw Error(ErrorKind::kOutOfBounds, error);
      if (out.out_of_bounds_.empty()) out.out_of_bounds_ = error;
    }
    out.binding_.offset = step;
    if (d > 0) view += ", ";
    if (s.squeeze) {
      AppendInt(view, s.start);
      if (track_inside) out.none_inside_ = out.none_inside_ || s.start < lo || s.start >= hi;
    } else {
      view += "ds(";
      AppendInt(view, s.start);
      view += ", ";
      AppendInt(view, s.size);
      view += ')';
      out.shape_.push_back(s.size);
      out.binding_.strides.push_back(binding_.strides[d]);
      if (track_inside) {
        // In 128 bits: a start far below 0 would overflow lo - start.
        const auto inside = [&](int64_t index) {
          return static_cast<int64_t>(std::clamp<__int128>(__int128{index} - s.start, 0, s.size));
        };
        out.inside_lo_.push_back(inside(lo));
        out.inside_hi_.push_back(inside(hi));
      }
    }
  }
  view += ']';
  if (out.out_of_bounds_.empty()) {
    out.inside_lo_.clear();
    out.inside_hi_.clear();
    out.none_inside_ = false;
    return out;
  }
  // A view of an out-of-bounds view may lie inside the ref again.
  bool inside = !out.none_inside_;
  for (size_t d = 0; inside && d < out.shape_.size(); ++d)
    inside = out.inside_lo_[d] == 0 && out.inside_hi_[d] == out.shape_[d];
  if (inside) {
    out.out_of_bounds_.clear();
    out.inside_lo_.clear();
    out.inside_hi_.clear();
    out.none_inside_ = false;
  }
  return out;
}

std::optional<std::pair<Ref, Shape>> Ref::InBoundsPart() const {
  if (out_of_bounds_.empty()) return std::make_pair(*this, Shape(shape_.size(), 0));
  if (none_inside_) return std::nullopt;
  Ref part = *this;
  part.out_of_bounds_.clear();
  part.inside_lo_.clear();
  part.inside_hi_.clear();
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (inside_lo_[d] >= inside_hi_[d]) return std::nullopt;
    part.shape_[d] = inside_hi_[d] - inside_lo_[d];
    // The sum lies inside the buffer; its terms may not fit alone (a view far before it).
    part.binding_.offset = static_cast<int64_t>(static_cast<uint64_t>(part.binding_.offset) +
                                                static_cast<uint64_t>(inside_lo_[d]) *
                                                    static_cast<uint64_t>(binding_.strides[d]));
  }
  return std::make_pair(part, inside_lo_);
}

std::string Ref::Describe() const {
  if (is_semaphore() && !view_.empty()) return name_ + view_;
  return view_.empty() ? name_ : name_ + ".at" + view_;
}

}  // namespace tpusim::dsl
