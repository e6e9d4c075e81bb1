#include "dsl/copy_label.h"

#include <cstring>
#include <new>
#include <string>

namespace tpusim::dsl {

namespace {

// One allocation: this header, then both refs' slices, then both names' characters.
// Holding the refs instead would keep both their blocks (128 bytes each for a view of one
// dimension, and the name's) alive through every semaphore's last touches of the DMA, where
// the text it replaces took about 130 bytes; this takes about 100.
class CopyLabelSource final : public base::LabelSource {
 public:
  static const CopyLabelSource* Make(const Ref::DescriptionParts& src,
                                     const Ref::DescriptionParts& dst, bool remote, int device) {
    const size_t slices = src.view.size() + dst.view.size();
    const size_t bytes = sizeof(CopyLabelSource) + slices * sizeof(Ref::ViewSlice) +
                         src.name.size() + dst.name.size();
    void* storage = ::operator new(bytes);
    auto* source = new (storage) CopyLabelSource(src, dst, remote, device);
    auto* view = source->slices();
    auto* name = reinterpret_cast<char*>(view + slices);
    for (const Ref::DescriptionParts* side : {&src, &dst}) {
      if (!side->view.empty()) std::memcpy(view, side->view.data(), side->view.size_bytes());
      view += side->view.size();
      if (!side->name.empty()) std::memcpy(name, side->name.data(), side->name.size());
      name += side->name.size();
    }
    return source;
  }

 private:
  struct Side {
    uint32_t name_size;
    uint32_t view_size;
    bool viewed;
    bool semaphore;
  };

  CopyLabelSource(const Ref::DescriptionParts& src, const Ref::DescriptionParts& dst, bool remote,
                  int device)
      : sides_{SideOf(src), SideOf(dst)}, device_(device), remote_(remote) {}
  static Side SideOf(const Ref::DescriptionParts& parts) {
    return {static_cast<uint32_t>(parts.name.size()), static_cast<uint32_t>(parts.view.size()),
            parts.viewed, parts.semaphore};
  }

  Ref::ViewSlice* slices() const {
    // The storage after this object, allocated with it (Make); a multiple of 8 bytes in.
    static_assert(sizeof(CopyLabelSource) % alignof(Ref::ViewSlice) == 0);
    return reinterpret_cast<Ref::ViewSlice*>(
        const_cast<char*>(reinterpret_cast<const char*>(this) + sizeof(CopyLabelSource)));
  }
  // Side i's parts, pointing into this object's storage.
  Ref::DescriptionParts Parts(int i) const {
    const Ref::ViewSlice* view = slices() + (i == 0 ? 0 : sides_[0].view_size);
    const char* name =
        reinterpret_cast<const char*>(slices() + sides_[0].view_size + sides_[1].view_size) +
        (i == 0 ? 0 : sides_[0].name_size);
    return {{name, sides_[i].name_size},
            sides_[i].viewed,
            sides_[i].semaphore,
            {view, sides_[i].view_size}};
  }

  void Render(std::string& out) const override {
    out += remote_ ? "remote copy " : "copy ";
    Ref::AppendDescription(Parts(0), out);
    if (remote_) {
      out += " -> device ";
      out += std::to_string(device_);
      out += ' ';
    } else {
      out += " -> ";
    }
    Ref::AppendDescription(Parts(1), out);
  }
  void Destroy() const override {
    this->~CopyLabelSource();
    ::operator delete(const_cast<void*>(static_cast<const void*>(this)));
  }

  Side sides_[2];
  int32_t device_;
  bool remote_;
};

}  // namespace

base::Label CopyLabel(const Ref& src, const Ref& dst, bool remote, int device) {
  return base::Label(
      CopyLabelSource::Make(src.description_parts(), dst.description_parts(), remote, device));
}

}  // namespace tpusim::dsl
