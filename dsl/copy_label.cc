#include "dsl/copy_label.h"

#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace tpusim::dsl {

namespace {

// Writes what a label's text is made of as bytes: small integers take one byte each (LEB128,
// signed ones zigzagged, as a slice's size is negative for an index and for the end of a
// level). Counting writes nothing: Make sizes the allocation with it, then fills it.
class Packer {
 public:
  explicit Packer(unsigned char* out) : out_(out) {}
  size_t size() const { return size_; }

  void Unsigned(uint64_t v) {
    while (v >= 0x80) {
      Byte(static_cast<unsigned char>(v | 0x80));
      v >>= 7;
    }
    Byte(static_cast<unsigned char>(v));
  }
  void Signed(int64_t v) {
    Unsigned((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void Side(const Ref::DescriptionParts& parts) {
    Byte(static_cast<unsigned char>((parts.viewed ? 1 : 0) | (parts.semaphore ? 2 : 0)));
    Unsigned(parts.name.size());
    Unsigned(parts.view.size());
    for (const Ref::ViewSlice& s : parts.view) {
      Signed(s.start);
      Signed(s.size);
    }
    if (out_ && !parts.name.empty())
      std::memcpy(out_ + size_, parts.name.data(), parts.name.size());
    size_ += parts.name.size();
  }

 private:
  void Byte(unsigned char b) {
    if (out_) out_[size_] = b;
    ++size_;
  }
  unsigned char* out_;
  size_t size_ = 0;
};

// Reads back what Packer wrote, in the same order.
class Unpacker {
 public:
  explicit Unpacker(const unsigned char* in) : in_(in) {}
  unsigned char Byte() { return *in_++; }
  uint64_t Unsigned() {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const unsigned char b = Byte();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  }
  int64_t Signed() {
    const uint64_t v = Unsigned();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  // One side's parts; its slices go to `view`, its name stays in the packed bytes.
  Ref::DescriptionParts Side(std::vector<Ref::ViewSlice>& view) {
    const unsigned char flags = Byte();
    const size_t name_size = Unsigned();
    view.resize(Unsigned());
    for (Ref::ViewSlice& s : view) {
      s.start = Signed();
      s.size = Signed();
    }
    const char* name = reinterpret_cast<const char*>(in_);
    in_ += name_size;
    return {{name, name_size}, (flags & 1) != 0, (flags & 2) != 0, {view.data(), view.size()}};
  }

 private:
  const unsigned char* in_;
};

bool SameParts(const Ref::DescriptionParts& a, const Ref::DescriptionParts& b) {
  if (a.name != b.name || a.viewed != b.viewed || a.semaphore != b.semaphore ||
      a.view.size() != b.view.size()) {
    return false;
  }
  if (a.view.data() == b.view.data()) return true;  // one ref on both sides (all_gather_nd)
  for (size_t i = 0; i < a.view.size(); ++i) {
    if (a.view[i].start != b.view[i].start || a.view[i].size != b.view[i].size) return false;
  }
  return true;
}

// One allocation: this header, then both refs' names and slices packed as bytes (Packer),
// one side only when both are the same, as a copy of a ref onto a peer's same ref is. Every
// semaphore keeps its last three touches' labels, so a pod keeps hundreds per device alive:
// with the slices as 16-byte pairs and both sides kept, an all_gather_nd label took 224
// bytes; packed, 48 (docs/performance-at-scale.md).
class CopyLabelSource final : public base::LabelSource {
 public:
  static const CopyLabelSource* Make(const Ref::DescriptionParts& src,
                                     const Ref::DescriptionParts& dst, bool remote, int device) {
    const bool same = SameParts(src, dst);
    Packer count(nullptr);
    Pack(count, src, dst, same, remote, device);
    void* storage = ::operator new(sizeof(CopyLabelSource) + count.size());
    auto* source = new (storage) CopyLabelSource();
    Packer fill(source->packed());
    Pack(fill, src, dst, same, remote, device);
    return source;
  }

 private:
  CopyLabelSource() = default;

  static void Pack(Packer& p, const Ref::DescriptionParts& src, const Ref::DescriptionParts& dst,
                   bool same, bool remote, int device) {
    p.Unsigned((remote ? 1u : 0u) | (same ? 2u : 0u));
    if (remote) p.Signed(device);
    p.Side(src);
    if (!same) p.Side(dst);
  }

  unsigned char* packed() const {
    // The storage after this object, allocated with it (Make).
    return const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(this) +
                                      sizeof(CopyLabelSource));
  }

  void Render(std::string& out) const override {
    Unpacker in(packed());
    const uint64_t flags = in.Unsigned();
    const bool remote = (flags & 1) != 0;
    const bool same = (flags & 2) != 0;
    const int64_t device = remote ? in.Signed() : 0;
    std::vector<Ref::ViewSlice> src_view, dst_view;
    const Ref::DescriptionParts src = in.Side(src_view);
    out += remote ? "remote copy " : "copy ";
    Ref::AppendDescription(src, out);
    if (remote) {
      out += " -> device ";
      out += std::to_string(device);
      out += ' ';
    } else {
      out += " -> ";
    }
    Ref::AppendDescription(same ? src : in.Side(dst_view), out);
  }
  void Destroy() const override {
    this->~CopyLabelSource();
    ::operator delete(const_cast<void*>(static_cast<const void*>(this)));
  }
};

}  // namespace

base::Label CopyLabel(const Ref& src, const Ref& dst, bool remote, int device) {
  return base::Label(
      CopyLabelSource::Make(src.description_parts(), dst.description_parts(), remote, device));
}

}  // namespace tpusim::dsl
