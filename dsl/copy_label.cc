#include "dsl/copy_label.h"

#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace tpusim::dsl {

namespace {

// How a label's sides are packed after its header: per side its name's and view's sizes,
// then its slices, then its name's characters. Narrow (the common case: every slice's start
// and size fits in 32 bits, names and views are shorter than 64 Ki) the sizes take two bytes
// each and a slice eight; else four bytes each and a slice its sixteen. One side only when
// both are the same. A byte-by-byte code (LEB128) packed an all_gather_nd label into 48 bytes
// where this takes 80, but cost twice the instructions of the copy it replaced, on every DMA.
static_assert(sizeof(Ref::ViewSlice) == 2 * sizeof(int64_t), "a slice is its start and size");

template <typename Size, typename Value>
unsigned char* PutSide(unsigned char* out, const Ref::DescriptionParts& parts) {
  const Size sizes[2] = {static_cast<Size>(parts.name.size()),
                         static_cast<Size>(parts.view.size())};
  std::memcpy(out, sizes, sizeof(sizes));
  out += sizeof(sizes);
  if constexpr (sizeof(Value) == sizeof(Ref::ViewSlice::start)) {  // as they are: one copy
    if (!parts.view.empty()) std::memcpy(out, parts.view.data(), parts.view.size_bytes());
    out += parts.view.size_bytes();
  } else {
    for (const Ref::ViewSlice& s : parts.view) {
      const Value pair[2] = {static_cast<Value>(s.start), static_cast<Value>(s.size)};
      std::memcpy(out, pair, sizeof(pair));
      out += sizeof(pair);
    }
  }
  if (!parts.name.empty()) std::memcpy(out, parts.name.data(), parts.name.size());
  return out + parts.name.size();
}

template <typename Size, typename Value>
size_t SideBytes(const Ref::DescriptionParts& parts) {
  return 2 * sizeof(Size) + parts.view.size() * 2 * sizeof(Value) + parts.name.size();
}

bool FitsNarrow(const Ref::DescriptionParts& parts) {
  if (parts.name.size() > UINT16_MAX || parts.view.size() > UINT16_MAX) return false;
  bool fits = true;
  for (const Ref::ViewSlice& s : parts.view)
    fits &= s.start == static_cast<int32_t>(s.start) && s.size == static_cast<int32_t>(s.size);
  return fits;
}

// Reads back what PutSide wrote, in the same order.
template <typename Size, typename Value>
Ref::DescriptionParts GetSide(const unsigned char*& in, bool viewed, bool semaphore,
                              std::vector<Ref::ViewSlice>& view) {
  Size sizes[2];
  std::memcpy(sizes, in, sizeof(sizes));
  in += sizeof(sizes);
  view.resize(sizes[1]);
  for (Ref::ViewSlice& s : view) {
    Value pair[2];
    std::memcpy(pair, in, sizeof(pair));
    in += sizeof(pair);
    s.start = pair[0];
    s.size = pair[1];
  }
  const char* name = reinterpret_cast<const char*>(in);
  in += sizes[0];
  return {{name, sizes[0]}, viewed, semaphore, {view.data(), view.size()}};
}

bool SameParts(const Ref::DescriptionParts& a, const Ref::DescriptionParts& b) {
  if (a.viewed != b.viewed || a.semaphore != b.semaphore || a.view.size() != b.view.size() ||
      a.name.size() != b.name.size()) {
    return false;
  }
  // Two views of one buffer share its name's characters: no comparison of them then.
  if (a.name.data() != b.name.data() && a.name != b.name) return false;
  if (a.view.data() == b.view.data()) return true;  // one ref on both sides (all_gather_nd)
  for (size_t i = 0; i < a.view.size(); ++i) {
    if (a.view[i].start != b.view[i].start || a.view[i].size != b.view[i].size) return false;
  }
  return true;
}

// One allocation: this header, then both refs' names and slices (PutSide), one side only when
// both are the same, as a copy of a ref onto a peer's same ref is. Every semaphore keeps its
// last three touches' labels, so a pod keeps hundreds per device alive: with both sides kept
// and the slices as 16-byte pairs, an all_gather_nd label took 224 bytes; now 80
// (docs/performance-pod-memory.md).
class CopyLabelSource final : public base::LabelSource {
 public:
  // One ref on both sides (Ref::same_block, or sides SameParts finds alike): one side kept.
  // Narrowed only then, as for a copy of a ref onto a peer's (the labels a pod keeps):
  // narrowing both sides cost the 16-chip rows more than the copy it replaced.
  static const CopyLabelSource* MakeOneSided(const Ref::DescriptionParts& side, bool remote,
                                             int device) {
    const bool narrow = FitsNarrow(side);
    const size_t bytes =
        narrow ? SideBytes<uint16_t, int32_t>(side) : SideBytes<uint32_t, int64_t>(side);
    void* storage = ::operator new(sizeof(CopyLabelSource) + bytes);
    auto* source = new (storage) CopyLabelSource(side, side, remote, true, narrow, device);
    if (narrow) {
      PutSide<uint16_t, int32_t>(source->packed(), side);
    } else {
      PutSide<uint32_t, int64_t>(source->packed(), side);
    }
    return source;
  }

  static const CopyLabelSource* Make(const Ref::DescriptionParts& src,
                                     const Ref::DescriptionParts& dst, bool remote, int device) {
    if (SameParts(src, dst)) return MakeOneSided(src, remote, device);
    const size_t bytes = SideBytes<uint32_t, int64_t>(src) + SideBytes<uint32_t, int64_t>(dst);
    void* storage = ::operator new(sizeof(CopyLabelSource) + bytes);
    auto* source = new (storage) CopyLabelSource(src, dst, remote, false, false, device);
    PutSide<uint32_t, int64_t>(PutSide<uint32_t, int64_t>(source->packed(), src), dst);
    return source;
  }

 private:
  enum Flag : uint8_t {
    kRemote = 1,
    kSame = 2,
    kNarrow = 4,
    kSrcViewed = 8,
    kSrcSemaphore = 16,
    kDstViewed = 32,
    kDstSemaphore = 64,
  };
  CopyLabelSource(const Ref::DescriptionParts& src, const Ref::DescriptionParts& dst, bool remote,
                  bool same, bool narrow, int device)
      : device_(device),
        flags_(static_cast<uint8_t>(
            (remote ? kRemote : 0) | (same ? kSame : 0) | (narrow ? kNarrow : 0) |
            (src.viewed ? kSrcViewed : 0) | (src.semaphore ? kSrcSemaphore : 0) |
            (dst.viewed ? kDstViewed : 0) | (dst.semaphore ? kDstSemaphore : 0))) {}

  unsigned char* packed() const {
    // The storage after this object, allocated with it (Make).
    return const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(this) +
                                      sizeof(CopyLabelSource));
  }

  void Render(std::string& out) const override {
    const unsigned char* in = packed();
    const bool remote = (flags_ & kRemote) != 0;
    const bool same = (flags_ & kSame) != 0;
    const bool narrow = (flags_ & kNarrow) != 0;
    std::vector<Ref::ViewSlice> src_view, dst_view;
    const auto side = [&](bool viewed, bool semaphore, std::vector<Ref::ViewSlice>& view) {
      return narrow ? GetSide<uint16_t, int32_t>(in, viewed, semaphore, view)
                    : GetSide<uint32_t, int64_t>(in, viewed, semaphore, view);
    };
    const Ref::DescriptionParts src =
        side((flags_ & kSrcViewed) != 0, (flags_ & kSrcSemaphore) != 0, src_view);
    out += remote ? "remote copy " : "copy ";
    Ref::AppendDescription(src, out);
    if (remote) {
      out += " -> device ";
      out += std::to_string(device_);
      out += ' ';
    } else {
      out += " -> ";
    }
    Ref::AppendDescription(
        same ? src : side((flags_ & kDstViewed) != 0, (flags_ & kDstSemaphore) != 0, dst_view),
        out);
  }
  void Destroy() const override {
    this->~CopyLabelSource();
    ::operator delete(const_cast<void*>(static_cast<const void*>(this)));
  }

  int32_t device_;
  uint8_t flags_;
};

}  // namespace

base::Label CopyLabel(const Ref& src, const Ref& dst, bool remote, int device) {
  if (src.same_block(dst))
    return base::Label(CopyLabelSource::MakeOneSided(src.description_parts(), remote, device));
  return base::Label(
      CopyLabelSource::Make(src.description_parts(), dst.description_parts(), remote, device));
}

}  // namespace tpusim::dsl
