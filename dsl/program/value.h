#pragma once

// A program-level array: one device's array in that device's HBM (a jax.Array's shard, as
// a shard_map body sees it). Its buffer is allocated when the op that produces it runs and
// freed when the last handle goes away, so HBM use follows the program's live ranges.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/core_port.h"
#include "base/errors.h"
#include "dsl/array.h"
#include "dsl/pallas_call.h"

namespace tpusim::base {
class Engine;
}

namespace tpusim::dsl {

// One device's HBM as the program uses it: what is live, and the peak over the run.
class DeviceHbm {
 public:
  DeviceHbm(base::Engine& engine, base::ChipId chip) : engine_(&engine), chip_(chip) {}

  // From the core's thread on: allocations and frees go through its port (in simulated
  // time order). Detach when the run is over: later frees are bookkeeping only.
  void Attach(base::CorePort* port) { port_ = port; }
  void Detach() {
    port_ = nullptr;
    engine_ = nullptr;
  }

  // Throws Error(kCapacity) with HBM's allocation breakdown when it does not fit.
  base::BufferHandle Allocate(uint64_t bytes, const std::string& label, base::Uninitialized fill);
  void Release(base::BufferHandle buffer, uint64_t bytes);

  // A free that failed (a DMA still using the buffer): destructors cannot throw, so the
  // runtime rethrows it after the op that dropped the value.
  void ThrowPendingError();

  // Pallas interpret mode's uninitialized_memory: zeros instead of NaN.
  bool zero_uninitialized = false;
  uint64_t live_bytes() const { return live_; }
  uint64_t peak_bytes() const { return peak_; }

 private:
  base::Engine* engine_;
  base::CorePort* port_ = nullptr;
  base::ChipId chip_;
  uint64_t live_ = 0;
  uint64_t peak_ = 0;
  std::optional<Error> pending_;
};

class Value {
 public:
  Value() = default;
  // A fresh HBM array of `type` on `hbm`'s device, labelled in capacity reports.
  static Value Allocate(const std::shared_ptr<DeviceHbm>& hbm, const ShapeDtype& type,
                        const std::string& label);

  bool defined() const { return storage_ != nullptr; }
  const ShapeDtype& type() const { return view_ ? *view_ : storage_->type; }
  const Shape& shape() const { return type().shape; }
  DType dtype() const { return type().dtype; }
  int64_t size() const { return NumElements(shape()); }
  uint64_t nbytes() const { return static_cast<uint64_t>(size()) * SizeOf(dtype()); }
  std::string Describe() const { return TypeString(dtype(), shape()); }  // "bf16[256,128]"

  // For the runtime: the HBM buffer holding it, and the device HBM (of one run) it lives
  // in; ops check that it is their own device's, of this run.
  base::BufferHandle buffer() const { return storage_->buffer; }
  const DeviceHbm* home() const { return storage_->home.get(); }

  // The same buffer seen as `type`, of the same byte size (XLA's bitcast): no copy, no time.
  // Throws Error(kInvalidArgument) when the sizes differ.
  Value View(const ShapeDtype& type) const;

  // input_output_aliases: a new value that takes over this one's buffer, which `op` then
  // writes. This value is donated: every handle to it is dead from here on, and
  // donated_to() names `op` for the error a later use gives.
  Value Donate(const std::string& op) const;
  const std::string& donated_to() const { return storage_->donated_to; }

  // What the host knows this value holds (a program input given with data), so that
  // timing-only runs can read it; nullopt for values ops computed.
  void set_host_values(std::function<Array()> values) { storage_->host = std::move(values); }
  std::optional<Array> host_values() const {
    if (!storage_->host) return std::nullopt;
    return storage_->host();
  }

 private:
  struct Storage {
    ShapeDtype type;
    base::BufferHandle buffer;
    std::shared_ptr<DeviceHbm> hbm;         // null once donated: the new owner frees the buffer
    std::shared_ptr<const DeviceHbm> home;  // where it lives, donated or not
    std::string donated_to;
    std::function<Array()> host;
    ~Storage() {
      if (hbm)
        hbm->Release(buffer, static_cast<uint64_t>(NumElements(type.shape)) * SizeOf(type.dtype));
    }
  };
  std::shared_ptr<Storage> storage_;
  std::shared_ptr<const ShapeDtype> view_;  // set by View
};

}  // namespace tpusim::dsl
