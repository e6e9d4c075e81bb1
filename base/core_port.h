#pragma once

// The narrow interface between a kernel (the DSL) and the model: one per core. It names
// buffers, semaphores and byte regions, never shapes or BlockSpecs, and carries no SystemC
// type, so kernel code can run on another engine later.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/device_grid.h"
#include "base/inline_vector.h"
#include "base/label.h"
#include "base/time.h"
#include "base/work.h"

namespace tpusim::base {

enum class MemorySpace { kHbm, kVmem, kSmem };
const char* MemorySpaceName(MemorySpace space);  // "HBM", "VMEM", "SMEM"

struct BufferHandle {
  ChipId chip = 0;
  MemorySpace space = MemorySpace::kHbm;
  uint32_t index = 0;
  // Which TensorCore's VMEM or SMEM (each core has its own); 0 for HBM, which the chip's
  // cores share.
  uint32_t core = 0;
  bool operator==(const BufferHandle&) const = default;
};

// A box of bytes inside a buffer: counts[i] elements along dimension i, strides in bytes;
// the innermost dimension is contiguous when its stride equals element_bytes.
struct ByteBox {
  uint64_t offset = 0;
  // Inline up to four dimensions: every DMA carries two boxes (base/inline_vector.h).
  InlineVector<uint64_t, 4> counts;
  InlineVector<uint64_t, 4> strides;
  uint32_t element_bytes = 1;

  // Both saturate at UINT64_MAX, so a box that cannot fit any buffer fails every bounds
  // check instead of wrapping around into one.
  uint64_t bytes() const {
    uint64_t n = element_bytes;
    for (auto c : counts) {
      if (__builtin_mul_overflow(n, c, &n)) return ~uint64_t{0};
    }
    return n;
  }
  // One past the last byte touched.
  uint64_t end() const {
    uint64_t last = offset;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] == 0) return offset;
      uint64_t span = 0;
      if (__builtin_mul_overflow(counts[i] - 1, strides[i], &span) ||
          __builtin_add_overflow(last, span, &last))
        return ~uint64_t{0};
    }
    return __builtin_add_overflow(last, element_bytes, &last) ? ~uint64_t{0} : last;
  }
  // "ends at byte 4096", or "ends past the 64-bit address range", for bounds errors.
  std::string DescribeEnd() const {
    const uint64_t e = end();
    return e == ~uint64_t{0} ? "ends past the 64-bit address range"
                             : "ends at byte " + std::to_string(e);
  }
};

struct Region {
  BufferHandle buffer;
  ByteBox box;
};

// What a buffer reads as before anything writes it: the low `element_bytes` bytes of
// `pattern` (little-endian), repeated, e.g. a NaN of the buffer's dtype. Zero by default.
struct Uninitialized {
  uint32_t pattern = 0;
  uint32_t element_bytes = 1;

  // Writes bytes [offset, offset + size) of such a buffer to `out`.
  void Fill(uint64_t offset, uint64_t size, uint8_t* out) const;
};

enum class SemaphoreKind { kDma, kRegular, kBarrier };
const char* SemaphoreKindName(SemaphoreKind kind);

struct SemaphoreHandle {
  ChipId chip = 0;
  uint32_t index = 0;
  bool operator==(const SemaphoreHandle&) const = default;
};

struct DmaRequest {
  Region source;
  Region destination;
  bool has_send_semaphore = false;
  SemaphoreHandle send_semaphore;  // on the issuing chip; raised as bytes leave
  SemaphoreHandle recv_semaphore;  // on the destination chip; raised as bytes land
  Label label;
  // An XLA collective's DMA (dsl::PallasCall::xla_collective): v5e's power-of-two offset
  // rule for Pallas kernels does not apply to it.
  bool xla_collective = false;
};

// One side of a race, as its report and the trace name it.
struct RaceAccess {
  ChipId chip = 0;   // the core that made it, or the DMA's issuer
  std::string what;  // "load of 'buf.at[ds(0, 128)]'", "DMA 'copy x -> buf' writes"
  Picoseconds when = 0;
  std::string where;  // the core's open scopes: "kernel > step (1,)"
  uint32_t core = 0;  // which TensorCore of the chip (reports name it on chips of several)
};
struct RaceReport {
  BufferHandle buffer;  // the memory both touch
  RaceAccess earlier;
  RaceAccess later;
  std::string fix;
};

enum class WaitKind { kDmaSend, kDmaRecv, kDma, kSemaphore };
const char* WaitKindName(WaitKind kind);  // "wait_send", "wait_recv", "wait", "semaphore_wait"

// kScalar is the core's own control work (a grid step's bookkeeping): it shows on the
// core's track, not on a unit's.
enum class ComputeUnit { kMxu, kVpu, kScalar };

class CorePort {
 public:
  virtual ~CorePort() = default;

  virtual ChipId chip() const = 0;
  virtual bool functional() const = 0;
  virtual Picoseconds Now() const = 0;

  // Never blocks, like Pallas's start(): the DMA queues behind busy engines if need be.
  virtual void StartDma(const DmaRequest& request) = 0;
  // Blocks until the semaphore holds at least `amount`, then subtracts it.
  virtual void Wait(SemaphoreHandle semaphore, int64_t amount, WaitKind kind,
                    std::string_view what) = 0;
  // Adds `amount` to a semaphore here or on another chip (after the route's latency).
  virtual void Signal(SemaphoreHandle semaphore, int64_t amount) = 0;
  // The kernel's semaphore_read: costs the core a scalar read, so a polling loop lets
  // simulated time pass and the signal it waits for can arrive.
  virtual int64_t Read(SemaphoreHandle semaphore) = 0;
  // The value now, at no cost: for the DSL's own checks, which the kernel does not see.
  virtual int64_t Peek(SemaphoreHandle semaphore) const = 0;
  virtual std::string SemaphoreName(SemaphoreHandle semaphore) const = 0;
  virtual SemaphoreKind KindOf(SemaphoreHandle semaphore) const = 0;

  // Has the model's compute model (sim/compute_models.h) turn `work` into time: a launch on
  // the core, a unit held, HBM traffic booked on the chip's HBM port beside the DMAs in
  // flight. The core waits until the work is done. `what` names it on the trace.
  virtual void Execute(const Work& work, std::string_view what) = 0;
  // Occupies `unit` for `cycles` of this chip's clock; the core waits for it. For work the
  // caller has timed itself (tests, a fuzzer); kernels and programs describe their work to
  // Execute instead.
  virtual void Compute(ComputeUnit unit, uint64_t cycles, std::string_view what) = 0;
  virtual double clock_hz() const = 0;

  // Named spans on the core's trace track (kernel, grid steps, user scopes). `details` are
  // (name, text) pairs the trace shows as the span's arguments (an HLO op's op_name...).
  using ScopeDetails = std::vector<std::pair<std::string, std::string>>;
  virtual void BeginScope(std::string_view name, const ScopeDetails& details) = 0;
  void BeginScope(std::string_view name) { BeginScope(name, ScopeDetails{}); }
  virtual void EndScope() = 0;

  // Kernel loads and stores of local VMEM/SMEM (functional mode; empty otherwise),
  // compute ops' reads and writes included. `what` names the access for race reports, in
  // the kernel's terms: "load of 'buf.at[ds(0, 128)]'". Throws Error(kOutOfBounds) past
  // the buffer's end and Error(kRace) when a DMA on the bytes is not ordered before it.
  virtual void Load(const Region& region, void* out, std::string_view what) = 0;
  virtual void Store(const Region& region, const void* in, std::string_view what) = 0;
  // A race the DSL finds itself (a program step writing in place a buffer an async op
  // still reads), reported as the model reports its own: the run fails with
  // Error(kRace) naming the chip, both accesses and the fix, and a trace marks both on
  // the chip's "races" track.
  [[noreturn]] virtual void ReportRace(const RaceReport& race) = 0;

  // Buffers and semaphores made while the kernel runs (run_scoped, pipeline buffers), on
  // this core's chip. Allocate throws Error(kCapacity) with the memory's allocation
  // breakdown when `bytes` does not fit. Free throws Error(kRace) while a DMA still reads
  // or writes the buffer. Semaphores live until the run ends.
  virtual BufferHandle Allocate(MemorySpace space, uint64_t bytes, const std::string& label,
                                Uninitialized fill) = 0;
  virtual void Free(BufferHandle buffer) = 0;
  virtual SemaphoreHandle AddSemaphore(SemaphoreKind kind, const std::string& name) = 0;

  // A second thread of control on this chip, as an XLA async collective runs next to the
  // core's own ops: `body` starts now with its own port, and its scopes and waits show on
  // their own track under the chip. The MXU and VPU are shared: work on a busy unit waits
  // for it. Join blocks until the activity has finished (blocked time, traced as "join
  // <name>"). Every activity must be joined before the body that spawned it returns.
  using ActivityId = uint32_t;
  // Lets every other thread of control that can run at this simulated time run first (a
  // delta cycle): devices that enter a pallas_call at the same time all bind its buffers
  // before any of them runs kernel code.
  virtual void YieldToSameTime() = 0;
  virtual ActivityId Spawn(const std::string& name, std::function<void(CorePort&)> body) = 0;
  virtual void Join(ActivityId activity) = 0;
  // The chip's TensorCores (two on v4 and v5p megacore chips, docs/references.md §1) and
  // which of them this thread runs on. Every core has its own VMEM, SMEM, MXUs and VPU;
  // the cores share HBM, the DMA engines and ICI. Allocate places VMEM and SMEM buffers
  // in this thread's core.
  virtual int num_cores() const = 0;
  virtual int core_index() const = 0;
  // Spawn on TensorCore `core` of this chip (a megacore pallas_call's share of its grid):
  // `body` runs on that core's units and memories, on its core track when that is free.
  // Join it like any activity. A core outside [0, num_cores()) is Error(kKernelMisuse).
  virtual ActivityId SpawnOnCore(int core, const std::string& name,
                                 std::function<void(CorePort&)> body) = 0;
};

}  // namespace tpusim::base
