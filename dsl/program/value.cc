#include "dsl/program/value.h"

#include <algorithm>

#include "base/engine.h"
#include "dsl/call_layout.h"

namespace tpusim::dsl {

base::BufferHandle DeviceHbm::Allocate(uint64_t bytes, const std::string& label,
                                       base::Uninitialized fill) {
  base::BufferHandle buffer;
  if (port_) {
    buffer = port_->Allocate(base::MemorySpace::kHbm, bytes, label, fill);
  } else {
    buffer = engine_->Allocate(chip_, base::MemorySpace::kHbm, bytes, label, fill);
  }
  live_ += bytes;
  peak_ = std::max(peak_, live_);
  return buffer;
}

void DeviceHbm::Release(base::BufferHandle buffer, uint64_t bytes) {
  live_ -= std::min(live_, bytes);
  // Frees during the run are timed events of the core; afterwards only the count matters.
  if (!port_) return;
  try {
    port_->Free(buffer);
  } catch (const Error& e) {
    if (!pending_) pending_ = e;
  }
}

void DeviceHbm::ThrowPendingError() {
  if (!pending_) return;
  const Error e = *pending_;
  pending_.reset();
  throw e;
}

Value Value::Allocate(const std::shared_ptr<DeviceHbm>& hbm, const ShapeDtype& type,
                      const std::string& label) {
  Value v;
  const uint64_t bytes = static_cast<uint64_t>(NumElements(type.shape)) * SizeOf(type.dtype);
  const base::BufferHandle buffer =
      hbm->Allocate(bytes, label + " " + TypeString(type.dtype, type.shape),
                    UninitializedFor(type.dtype, hbm->zero_uninitialized));
  v.storage_ = std::make_shared<Storage>();
  v.storage_->type = type;
  v.storage_->buffer = buffer;
  v.storage_->hbm = hbm;
  v.storage_->home = hbm;
  return v;
}

Value Value::View(const ShapeDtype& type) const {
  const uint64_t bytes = static_cast<uint64_t>(NumElements(type.shape)) * SizeOf(type.dtype);
  if (bytes != nbytes()) {
    throw Error(ErrorKind::kInvalidArgument,
                "cannot view " + Describe() + " (" + std::to_string(nbytes()) + " bytes) as " +
                    TypeString(type.dtype, type.shape) + " (" + std::to_string(bytes) +
                    " bytes): a view keeps the buffer's size.");
  }
  Value v = *this;
  v.view_ = std::make_shared<const ShapeDtype>(type);
  return v;
}

Value Value::Donate(const std::string& op) const {
  Value v;
  v.storage_ = std::make_shared<Storage>();
  v.storage_->type = type();
  v.storage_->buffer = storage_->buffer;
  v.storage_->hbm = std::move(storage_->hbm);
  v.storage_->home = storage_->home;
  storage_->donated_to = op;
  return v;
}

}  // namespace tpusim::dsl
