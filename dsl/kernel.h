#pragma once

// What a kernel body sees: program ids, mesh axis indices, async local and remote copies,
// semaphores and named scopes, with Pallas's names and semantics (docs/references.md §5).
// Blocking calls (waits, compute) advance simulated time for this device only.

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/core_port.h"
#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/ref.h"

namespace tpusim::base {
class CorePort;
struct Region;
struct SemaphoreHandle;
}  // namespace tpusim::base

namespace tpusim::dsl {

class Kernel;
struct CallLayout;
using Refs = std::vector<Ref>;

// The device a remote copy or signal targets: mesh coordinates, {axis: index} (other axes
// default to the caller's), or a logical id (row-major over the mesh).
class DeviceId {
 public:
  DeviceId(std::vector<int> mesh_coords) : coords_(std::move(mesh_coords)) {}  // NOLINT
  DeviceId(std::initializer_list<std::pair<std::string, int>> axes)            // NOLINT
      : axes_(axes.begin(), axes.end()), by_axes_(true) {}
  static DeviceId Logical(int id) {
    DeviceId d(std::vector<int>{});
    d.logical_ = id;
    return d;
  }
  std::string Describe() const;

 private:
  friend class Kernel;
  std::vector<int> coords_;
  std::vector<std::pair<std::string, int>> axes_;
  bool by_axes_ = false;
  int logical_ = -1;
};

// A struct of Refs that Kernel::operands fills in order.
template <typename T>
concept RefStruct = std::is_aggregate_v<T>;

// This device's place on a ring of devices: the line a mesh axis forms through it (the
// axis wraps around in the kernel's index arithmetic whether or not its links do), or one of
// XLA's replica groups (any devices, in the group's order). `left`, `right` and the members
// are logical device ids, for DeviceId::Logical.
struct Ring {
  int size = 1;   // devices on the ring (lax.psum(1, axis))
  int index = 0;  // this device's index on it (lax.axis_index)
  int left = 0;   // the device at index - 1, wrapping
  int right = 0;  // the device at index + 1, wrapping
  // The logical ids of the ring's devices, by index (shared: rings are passed by value).
  std::shared_ptr<const std::vector<int>> members;

  // The ring `members` forms, seen from logical device `device`; throws
  // Error(kInvalidArgument) when `device` is not a member.
  static Ring Of(std::shared_ptr<const std::vector<int>> members, int device);

  // The index `offset` places to the right (negative: to the left), wrapping: e.g. the
  // shard that reached this device after `step` hops rightwards is index_at(-step).
  // One division: a kernel asks once per copy.
  int index_at(int offset) const {
    const int i = (index + offset) % size;
    return i < 0 ? i + size : i;
  }
  // The logical id of the device at ring index `i`, and that device as a copy's target.
  int device_at(int i) const { return (*members)[static_cast<size_t>(i)]; }
  DeviceId device(int i) const { return DeviceId::Logical(device_at(i)); }
  DeviceId left_device() const { return DeviceId::Logical(left); }
  DeviceId right_device() const { return DeviceId::Logical(right); }
};

// A DMA descriptor (make_async_copy / make_async_remote_copy). The receiver of a remote
// copy waits on its own receive semaphore with a descriptor of the same size.
class alignas(64) AsyncCopy {
 public:
  void start();
  void wait();       // local copy: until it lands; remote copy: wait_send then wait_recv
  void wait_send();  // until the bytes have left this device
  void wait_recv();  // until this device's receive semaphore holds this descriptor's bytes
  uint64_t nbytes() const { return nbytes_; }

 private:
  friend class Kernel;
  AsyncCopy() = default;
  // Each member made once from what async_copy and async_remote_copy looked up: made empty
  // and then assigned, a descriptor was zeroed and each ref's old (null) block checked.
  struct Semaphore {
    const Ref& ref;
    base::SemaphoreHandle here;  // on this device
    bool fixed;                  // Kernel::Fixed
  };
  AsyncCopy(Kernel* kernel, const Ref& src, const Ref& dst, const Semaphore& send,
            const Semaphore& recv, bool remote, int target_device, uint64_t nbytes)
      : kernel_(kernel),
        src_(src),
        dst_(dst),
        send_sem_(send.ref),
        recv_sem_(recv.ref),
        nbytes_(nbytes),
        send_here_(send.here.index),
        recv_here_(recv.here.index),
        target_device_(target_device),
        remote_(remote),
        send_fixed_(send.fixed),
        recv_fixed_(recv.fixed) {}
  // One line of the cache, aligned: a kernel keeps a step's descriptors side by side, and
  // its waits run after the thread was away, when a pod has evicted them; each now reads one
  // line (and the kernel's first, shared by all, for its port and device) where one of 96
  // bytes spanned two.
  Kernel* kernel_ = nullptr;
  Ref src_, dst_, send_sem_, recv_sem_;
  // src_.nbytes(), counted once: the waits read it after the thread was away, and on a pod
  // the source's shape is no longer in the cache by then.
  uint64_t nbytes_ = 0;
  // The semaphores' indices on this device, looked up when the descriptor was made: a call's
  // own semaphores keep theirs for the whole kernel (Kernel::Fixed), so start() and the
  // waits, which run after the thread was away and find the call's layout out of the cache,
  // need not look them up again. A scoped semaphore is looked up each time: its scope may
  // have ended since.
  uint32_t send_here_ = 0, recv_here_ = 0;
  int target_device_ = 0;
  bool remote_ = false;
  bool send_fixed_ = false, recv_fixed_ = false;
  // The send (receive) semaphore on this device: the handle kept above, or looked up now.
  base::SemaphoreHandle SendHere() const;
  base::SemaphoreHandle RecvHere() const;
  // The DMA's name, made when it is needed (start(), an error), and not kept: a descriptor
  // made only to wait on (a ring's receiver side) never makes one, and one that starts
  // hands it to the request, so that destroying the descriptor a step later, when the
  // label's line is out of the cache, need not touch it.
  base::Label label() const;
};
static_assert(sizeof(AsyncCopy) == 64, "a descriptor is one line of the cache");

// Shows as a slice on the core's trace track for as long as it lives, or until its
// kernel ends, whichever is first: one kept past the kernel (in a static, say) does
// nothing when it is destroyed.
class NamedScope {
 public:
  NamedScope(NamedScope&& other) noexcept
      : port_(std::exchange(other.port_, nullptr)), kernel_alive_(std::move(other.kernel_alive_)) {}
  NamedScope(const NamedScope&) = delete;
  NamedScope& operator=(const NamedScope&) = delete;
  ~NamedScope();

 private:
  friend class Kernel;
  NamedScope(base::CorePort* port, std::weak_ptr<const int> kernel_alive)
      : port_(port), kernel_alive_(std::move(kernel_alive)) {}
  base::CorePort* port_;
  std::weak_ptr<const int> kernel_alive_;  // expires with the kernel
};

class Kernel {
 public:
  Kernel(base::CorePort& port, CallLayout& layout, std::vector<int> grid,
         std::string call_name = "");
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel();

  // Grid position of the current step, as pl.program_id / pl.num_programs.
  int program_id(int axis) const;
  int num_programs(int axis) const;
  void set_program_ids(std::vector<int> ids) { program_ids_ = std::move(ids); }
  // The CompilerParams' dimension_semantics of a grid axis: "parallel", "core_parallel" or
  // "arbitrary" (the default). On a chip of one TensorCore one core runs every step, in
  // lexicographic order unless RunOptions::grid_seed shuffles the 'parallel' ones; on a
  // megacore chip the leading parallel axis is split over the cores (docs/dsl.md).
  const std::string& dimension_semantics(int axis) const;
  void set_dimension_semantics(std::vector<std::string> semantics) {
    dimension_semantics_ = std::move(semantics);
  }
  // RunOptions::grid_seed: emit_pipeline shuffles its 'parallel' dimensions with it too.
  std::optional<uint64_t> grid_seed() const;

  // The operands the pallas_call passes (inputs, outputs, then scratch_shapes), by the
  // names it gives them: in_names, out_names and the ScratchSpecs' names (unnamed ones are
  // "in0", "out0", "scratch0", ...). Within a grid step, pipelined operands are the step's
  // blocks. A name the call does not have, or has twice, is an error listing its operands.
  //   const Ref& x = k.ref("x");
  //   auto [x, out, sem] = k.refs("x", "out", "local_sem");
  const Ref& ref(std::string_view name) const;
  template <typename... Names>
  std::array<Ref, sizeof...(Names)> refs(const Names&... names) const {
    return {ref(names)...};
  }
  // All of them in order, as a Pallas kernel's parameters: into N names, or into a struct
  // whose members are all Refs (which inner lambdas can capture, unlike structured
  // bindings in clang 14). A count other than the call's is an error naming both.
  //   auto [x, out, local_sem, send_sems, recv_sems] = k.operands<5>();
  //   struct Operands { Ref x, out, local_sem, send_sems, recv_sems; };
  //   const auto r = k.operands<Operands>();  // r.x, r.out, ...
  template <size_t N>
  std::array<Ref, N> operands() const {
    CheckOperandCount(N);
    std::array<Ref, N> bound;
    for (size_t i = 0; i < N; ++i)
      bound[i] = Operands()[i];
    return bound;
  }
  template <RefStruct Struct>
  Struct operands() const {
    constexpr size_t n = RefMembers<Struct>();
    static_assert(n > 0, "k.operands<Struct>(): Struct's members must all be dsl::Ref");
    CheckOperandCount(n);
    return BindInOrder<Struct>(std::make_index_sequence<n>{});
  }
  // For the DSL's machinery: the current step's operands, valid while the step runs.
  void set_operands(const Refs& refs) { operands_ = &refs; }

  // This device's neighbours, index and ring size along a mesh axis.
  Ring ring(const std::string& axis) const;

  // This device's index along a mesh axis, and the axis's size (lax.axis_index / psum(1)).
  int axis_index(const std::string& axis) const;
  int axis_size(const std::string& axis) const;
  int device_id() const { return device_; }  // logical id
  const Mesh& mesh() const;

  AsyncCopy async_copy(const Ref& src, const Ref& dst, const Ref& sem);
  AsyncCopy async_remote_copy(const Ref& src, const Ref& dst, const Ref& send_sem,
                              const Ref& recv_sem, const DeviceId& device);

  // semaphore_signal / semaphore_wait / semaphore_read.
  void signal(const Ref& sem, int64_t inc = 1);
  void signal(const Ref& sem, int64_t inc, const DeviceId& device);
  // semaphore_signal(sem, inc, device_id=, core_index=): the semaphore of TensorCore
  // `core_index` of `device` (this device when nullopt), e.g. the other core of a megacore
  // chip. A core_index outside [0, num_cores()) is an error.
  void signal(const Ref& sem, int64_t inc, const std::optional<DeviceId>& device, int core_index);
  // The TensorCore this kernel runs on and how many the device has (jax.lax.axis_index /
  // psum(1) of Pallas's core axis): 2 on a v4 or v5p megacore chip, whose pallas_call splits
  // its leading 'parallel' grid axis over both cores (docs/dsl.md, "Megacore").
  int core_index() const { return core_; }
  int num_cores() const;
  void wait(const Ref& sem, int64_t value = 1);
  int64_t semaphore_read(const Ref& sem);
  // pltpu.get_barrier_semaphore(): the barrier semaphore of the call's collective_id
  // (CompilerParams), for the start barrier; a call without a collective_id may not use it.
  Ref barrier_semaphore() const;

  [[nodiscard]] NamedScope named_scope(const std::string& name);
  // The same with (name, text) pairs the trace shows as the slice's arguments.
  [[nodiscard]] NamedScope named_scope(
      const std::string& name, const std::vector<std::pair<std::string, std::string>>& details);

  // Kernel-side loads and stores; only VMEM and SMEM refs allow them. A slice past the
  // ref's shape raises, but under RunOptions::out_of_bounds_reads kUninitialized a load
  // (and a compute op's read) gets the uninitialized value there and the data inside.
  Array load(const Ref& ref);
  void store(const Ref& ref, const Array& value);

  // MXU: acc = [acc +] jnp.dot(a, b, precision=, preferred_element_type=) for a [M, K]
  // and b [K, N] on VMEM. Float operands (bf16, f32; mixed ones promote to f32) give an
  // f32 (or bf16) result; integer operands (int8, int32) an exact int32 one, wrapping as
  // int32 does. preferred_element_type, when given, must be acc's dtype. Its work is the
  // dot's shape and passes (base/work.h): one bf16 pass; f32 DEFAULT one, HIGH three,
  // HIGHEST six.
  // The numerics follow the passes: f32 DEFAULT rounds both operands to bf16; HIGH and
  // HIGHEST split them into two and three bf16 pieces (bf16x3, bf16x6), as XLA does.
  // Blocks the core until the MXU is done.
  void dot(const Ref& a, const Ref& b, const Ref& acc, bool accumulate = true,
           Precision precision = Precision::kDefault,
           std::optional<DType> preferred_element_type = std::nullopt);
  // VPU elementwise ops on VMEM/SMEM refs of one shape; one vreg (8 x 128 32-bit
  // elements, 16 x 128 for bf16) per cycle plus the 2-cycle latency (docs/references.md §1,
  // docs/time-model.md).
  void add(const Ref& out, const Ref& a, const Ref& b);
  void multiply(const Ref& out, const Ref& a, const Ref& b);
  void maximum(const Ref& out, const Ref& a, const Ref& b);
  void minimum(const Ref& out, const Ref& a, const Ref& b);
  void cast(const Ref& out, const Ref& in);  // to out's dtype, bf16 rounds to nearest even
  void fill(const Ref& out, double value);   // e.g. zero an accumulator

  // For the DSL's own machinery (pipelines, compute ops).
  base::CorePort& port() { return port_; }
  int ResolveDevice(const DeviceId& device) const;
  // Throws Error(kOutOfBounds) for a view past its ref's shape: only reads may be that.
  base::Region Resolve(const Ref& ref, int device) const;
  // A load's or compute op's read of local `ref`, named `what` for race reports.
  Array ReadLocal(const Ref& ref, const std::string& what);
  // A new ref for this call's slots and scoped buffers: one that makes out-of-bounds views
  // when reads out of bounds are uninitialized.
  Ref MakeRef(int slot, std::string name, Shape shape, DType dtype, MemorySpace space,
              SemaphoreType semaphore_type = SemaphoreType::kDma) const;
  // This core's semaphore, or (OnCore) that of TensorCore `core` of `device`.
  base::SemaphoreHandle ResolveSemaphore(const Ref& sem, int device, const char* role) const;
  base::SemaphoreHandle ResolveSemaphoreOnCore(const Ref& sem, int device, int core,
                                               const char* role) const;
  // Buffers (or semaphore arrays) that live for a region of the kernel: run_scoped and
  // pipeline buffers. The same sequence of scopes on every device gives the same Ref, so
  // remote copies may target them. Free in reverse order of allocation; FreeScoped throws
  // when a DMA still uses the buffer, a semaphore is not back to 0, or the ref was freed
  // already. One still allocated when the kernel ends is an error naming it.
  Ref AllocateScoped(const std::string& name, const Shape& shape, DType dtype, MemorySpace space,
                     SemaphoreType semaphore_type = SemaphoreType::kDma,
                     const std::string& label = "");
  void FreeScoped(const Ref& ref);

 private:
  friend class AsyncCopy;
  template <typename Struct, size_t... I>
  Struct BindInOrder(std::index_sequence<I...>) const {
    return Struct{Operands()[I]...};
  }
  // How many Refs brace-initialise Struct: its member count when they are all Refs.
  template <typename Struct, typename... Taken>
  static constexpr size_t RefMembers() {
    if constexpr (sizeof...(Taken) < 64 && requires {
                    Struct{std::declval<Taken>()..., std::declval<Ref>()};
                  }) {
      return RefMembers<Struct, Taken..., Ref>();
    } else {
      return sizeof...(Taken);
    }
  }
  void CheckCopyOperands(const Ref& src, const Ref& dst) const;
  // Resolve, written into `region` (a DMA request's own, so that no region is made and
  // moved), and its buffer part alone.
  void ResolveInto(const Ref& ref, int device, base::Region& region) const;
  base::BufferHandle BufferOn(const Ref& ref, int device) const;
  // Whether `sem`'s handle on this core stays what it is now for the rest of the kernel: a
  // semaphore of the call's own slots, bound before the kernel starts and never unbound
  // while it runs (dsl/program/call_instance.cc), unlike a scoped one.
  bool Fixed(const Ref& sem) const;
  const Refs& Operands() const;
  void CheckOperandCount(size_t bound) const;
  std::string DescribeOperands() const;
  void CheckLocalAccess(const Ref& ref, const char* verb) const;
  enum class Elementwise { kAdd, kMultiply, kMaximum, kMinimum };
  void ElementwiseOp(Elementwise op, const Ref& out, const Ref& a, const Ref& b);

  base::CorePort& port_;
  // The port's chip and core, which never change: read on every copy and semaphore op, and
  // a load each here instead of a virtual call each.
  int device_;
  int core_;
  CallLayout& layout_;
  std::vector<int> grid_;
  std::string call_name_;
  const Refs* operands_ = nullptr;
  std::vector<int> program_ids_;
  std::vector<std::string> dimension_semantics_;
  uint64_t copies_ = 0;
  uint64_t scoped_serial_ = 0;  // AllocateScoped's count, to tell a double FreeScoped
  std::shared_ptr<const int> alive_ = std::make_shared<const int>(0);  // see NamedScope
};

using KernelFn = std::function<void(Kernel&, const Refs&)>;

}  // namespace tpusim::dsl
