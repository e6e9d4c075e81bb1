#pragma once

// A DMA's name, shared by its request, the engine's record of it, the race detector and the
// semaphores it raised: copying one costs a reference count, not a string. A DMA's name
// travels that far on every DMA, and a pod-scale run issues millions.
//
// Most DMAs' names are never read: only errors, race and deadlock reports and the trace
// show them. So a label may be lazy: made of a source that keeps what its text is written
// from (the DSL's copies keep their refs' names and slices, dsl/copy_label.h) and writes
// the text on the first str(). docs/performance-large-slices.md says what that saves.

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "base/reference_count.h"

namespace tpusim::base {

// What a label's text comes from. Immutable once made, but for the text it writes once.
class LabelSource {
 public:
  LabelSource(const LabelSource&) = delete;
  LabelSource& operator=(const LabelSource&) = delete;

  // Written on the first call (by any host thread); the same string, at the same address,
  // on every later one while the source lives.
  const std::string& text() const {
    const std::string* text = text_.load(std::memory_order_acquire);
    return text ? *text : Rendered();
  }
  // Whether text() has been written: for tests that check a run left a label unwritten.
  bool rendered() const { return text_.load(std::memory_order_acquire) != nullptr; }

 protected:
  LabelSource() = default;
  // A source whose text is given (`text` is its own member): nothing is left to write.
  explicit LabelSource(const std::string* text) : owns_text_(false), text_(text) {}
  virtual ~LabelSource();
  // Appends the text to `out`; the same text on every call.
  virtual void Render(std::string& out) const = 0;
  // Frees this source once the last label lets go: a source allocated with storage after
  // it frees it as it was allocated.
  virtual void Destroy() const { delete this; }

 private:
  friend class Label;
  const std::string& Rendered() const;

  // In this order: a lazy DMA label's source, header and all, fits in 96 bytes.
  mutable std::atomic<uint32_t> references_{0};
  bool owns_text_ = true;  // text_ came from Rendered()
  mutable std::atomic<const std::string*> text_{nullptr};
};

class Label {
 public:
  Label() = default;
  // A label whose text is known now.
  Label(std::string text);
  Label(const char* text) : Label(std::string(text)) {}
  // A lazy label: takes `source`, made with new (or as its Destroy frees it), which no other
  // label holds yet.
  explicit Label(const LabelSource* source) noexcept : source_(source) { Acquire(); }

  Label(const Label& other) noexcept : source_(other.source_) { Acquire(); }
  Label(Label&& other) noexcept : source_(std::exchange(other.source_, nullptr)) {}
  Label& operator=(const Label& other) noexcept {
    if (other.source_ != source_) {
      other.Acquire();
      Release();
      source_ = other.source_;
    }
    return *this;
  }
  Label& operator=(Label&& other) noexcept {
    if (this != &other) {
      Release();
      source_ = std::exchange(other.source_, nullptr);
    }
    return *this;
  }
  ~Label() { Release(); }

  // Stays valid, at the same address, while any copy of the label lives. A lazy label
  // writes its text on the first call.
  const std::string& str() const { return source_ ? source_->text() : Empty(); }
  // What its copies share (null for an empty label).
  const LabelSource* source() const { return source_; }

 private:
  static const std::string& Empty();
  // A label is copied and dropped half a dozen times per DMA (request, engine record,
  // semaphore touches): base/reference_count.h.
  void Acquire() const noexcept {
    if (source_) AddReference(source_->references_);
  }
  void Release() noexcept {
    if (source_ && DropReference(source_->references_)) source_->Destroy();
  }

  const LabelSource* source_ = nullptr;
};

}  // namespace tpusim::base
