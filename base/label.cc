#include "base/label.h"

#include <memory>

namespace tpusim::base {

namespace {

// A label made from its text.
class TextSource final : public LabelSource {
 public:
  explicit TextSource(std::string text) : LabelSource(&text_), text_(std::move(text)) {}

 private:
  void Render(std::string& out) const override { out += text_; }  // never called: given
  const std::string text_;
};

}  // namespace

LabelSource::~LabelSource() {
  if (owns_text_) delete text_.load(std::memory_order_acquire);
}

// Two threads may write the text at once: the first to publish it wins, the other's copy
// is dropped, so every caller sees one string.
const std::string& LabelSource::Rendered() const {
  auto text = std::make_unique<std::string>();
  Render(*text);
  const std::string* expected = nullptr;
  if (text_.compare_exchange_strong(expected, text.get(), std::memory_order_acq_rel,
                                    std::memory_order_acquire))
    return *text.release();
  return *expected;
}

Label::Label(std::string text) : Label(new TextSource(std::move(text))) {}

const std::string& Label::Empty() {
  static const std::string empty;
  return empty;
}

}  // namespace tpusim::base
