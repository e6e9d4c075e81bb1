// A kernel's semaphores (semaphore_signal, semaphore_wait, semaphore_read, the barrier
// semaphore) and which TensorCore of its device it runs on.

#include <optional>
#include <string>

#include "base/core_port.h"
#include "base/errors.h"
#include "dsl/call_layout.h"
#include "dsl/kernel.h"

namespace tpusim::dsl {

void Kernel::signal(const Ref& sem, int64_t inc) {
  port_.Signal(ResolveSemaphore(sem, device_id(), "signalled"), inc);
}

void Kernel::signal(const Ref& sem, int64_t inc, const DeviceId& device) {
  port_.Signal(ResolveSemaphore(sem, ResolveDevice(device), "signalled"), inc);
}

void Kernel::signal(const Ref& sem, int64_t inc, const std::optional<DeviceId>& device,
                    int core_index) {
  if (core_index < 0 || core_index >= num_cores()) {
    throw Error(ErrorKind::kKernelMisuse,
                "semaphore_signal of '" + sem.Describe() + "' names core_index " +
                    std::to_string(core_index) + ", but the device has " +
                    std::to_string(num_cores()) + " TensorCore" + (num_cores() == 1 ? "" : "s") +
                    "; pass a core_index in [0, num_cores()).");
  }
  const int target = device ? ResolveDevice(*device) : device_id();
  port_.Signal(ResolveSemaphoreOnCore(sem, target, core_index, "signalled"), inc);
}

int Kernel::num_cores() const {
  return port_.num_cores();
}

void Kernel::wait(const Ref& sem, int64_t value) {
  port_.Wait(ResolveSemaphore(sem, device_id(), "waited"), value, base::WaitKind::kSemaphore,
             "semaphore_wait");
}

int64_t Kernel::semaphore_read(const Ref& sem) {
  return port_.Read(ResolveSemaphore(sem, device_id(), "read"));
}

Ref Kernel::barrier_semaphore() const {
  if (layout_.barrier_slot < 0) {
    throw Error(ErrorKind::kKernelMisuse,
                "pallas_call '" + layout_.call_name +
                    "' uses barrier_semaphore() but sets no collective_id. Barrier semaphores "
                    "are allocated per collective_id, as in Pallas: set "
                    "compiler_params.collective_id (pltpu.CompilerParams(collective_id=...)), "
                    "and give calls that synchronise differently different ids.");
  }
  return layout_.slots[layout_.barrier_slot];
}

}  // namespace tpusim::dsl
