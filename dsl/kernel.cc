#include "dsl/kernel.h"

#include <algorithm>
#include <span>

#include "base/core_port.h"
#include "base/errors.h"
#include "dsl/call_layout.h"
#include "dsl/copy_label.h"

namespace tpusim::dsl {

base::Uninitialized UninitializedFor(DType dtype, bool zero) {
  if (zero) return {};
  switch (dtype) {
    case DType::kF32:
      return {0x7fc00000u, 4};  // quiet NaN
    case DType::kBF16:
      return {0x7fc0u, 2};
    case DType::kInt32:
      return {0x7fffffffu, 4};
    case DType::kInt8:
      return {0x7fu, 1};
    case DType::kBool:
      return {0x1u, 1};
    case DType::kUInt32:
      return {0xffffffffu, 4};
    case DType::kInt64:  // the pattern repeats: 0x7f7f...; any large value shows it
      return {0x7fu, 1};
    case DType::kF16:
      return {0x7e00u, 2};
  }
  return {};
}

namespace {

// The binding of `ref` on `device`; scoped slots may be missing or freed there. On the
// kernel's own device and core (`own`) a scoped ref must also be the one its slot holds now:
// a freed scoped ref's slot is reused by the next AllocateScoped, and the old ref must not
// reach the new buffer. Other devices number their scopes themselves, so there the slot is
// all that can be checked.
// Out of line and cold, as the other errors of a DMA's lookups: with the messages inline,
// every lookup paid for the stack frame they need.
[[gnu::cold, gnu::noinline]] void ThrowMissingSlot(const Ref& ref, int device) {
  const std::string d = "device " + std::to_string(device);
  throw Error(ErrorKind::kKernelMisuse,
              "'" + ref.Describe() + "' does not exist on " + d + " yet or any more: " + d +
                  " has not entered this pallas_call yet (a missing start barrier: signal "
                  "each peer's barrier_semaphore and wait for theirs before copying to "
                  "them), or has left it, or the buffer lives in a run_scoped or pipeline "
                  "scope that " +
                  d +
                  " has not opened or has closed. Every device must open "
                  "the same scopes in the same order before others copy into them.");
}

const SlotBinding& BindingOf(const CallLayout& layout, const Ref& ref, int device, int core,
                             bool own) {
  const auto& slots = BindingsOf(layout, device, core);
  const int slot = ref.binding().slot;
  const uint64_t serial = ref.binding().scope_serial;
  if (slot < 0 || slot >= static_cast<int>(slots.size()) || !slots[slot].live ||
      (own && serial != 0 && slots[slot].serial != serial))
    ThrowMissingSlot(ref, device);
  return slots[slot];
}

// `ref`'s slot on `device` as CallLayout::bound has it, when it is one of the call's own
// slots, which every DMA names (null: a scoped slot, found through its binding). A slot the
// device has not bound, or has freed, is an error.
const BoundSlot* OwnSlotOf(const CallLayout& layout, const Ref& ref, int device, int core) {
  const auto slot = static_cast<size_t>(ref.binding().slot);
  if (slot >= layout.slots.size()) return nullptr;
  const BoundSlot& bound = BoundOf(layout, device, core, slot);
  if (bound.state == BoundSlot::kUnbound) ThrowMissingSlot(ref, device);
  return &bound;
}

// Where `ref`'s slot is on `device`: its buffer, or (semaphore slots) its first semaphore's
// index.
base::BufferHandle BufferOf(const CallLayout& layout, const Ref& ref, int device, int core,
                            bool own) {
  const BoundSlot* bound = OwnSlotOf(layout, ref, device, core);
  if (bound && bound->state == BoundSlot::kBound) {
    return {static_cast<base::ChipId>(device), static_cast<base::MemorySpace>(bound->space),
            bound->index, bound->core};
  }
  return BindingOf(layout, ref, device, core, own).buffer;
}

uint32_t SemaphoreBaseOf(const CallLayout& layout, const Ref& ref, int device, int core, bool own) {
  if (const BoundSlot* bound = OwnSlotOf(layout, ref, device, core)) return bound->index;
  return BindingOf(layout, ref, device, core, own).semaphore_base;
}

[[gnu::cold, gnu::noinline]] void ThrowOutOfBoundsAccess(const Ref& ref) {
  throw Error(ErrorKind::kOutOfBounds,
              ref.out_of_bounds() +
                  " Only a read may run past the shape (its elements outside read as "
                  "uninitialized memory, as out_of_bounds_reads 'uninitialized' asks); "
                  "stores, compute results and DMAs must stay inside.");
}

[[gnu::cold, gnu::noinline]] void ThrowNotOneSemaphore(const Ref& sem, const char* role) {
  if (!sem.is_semaphore()) {
    throw Error(ErrorKind::kSemaphoreMisuse,
                std::string("the ") + role + " semaphore '" + sem.Describe() + "' is a " +
                    MemorySpaceName(sem.memory_space()) + " buffer, not a semaphore.");
  }
  throw Error(ErrorKind::kSemaphoreMisuse,
              std::string("the ") + role + " semaphore '" + sem.Describe() + "' is an array of " +
                  std::to_string(sem.size()) + " semaphores; pick one with " + sem.name() +
                  ".at(i).");
}

}  // namespace

NamedScope::~NamedScope() {
  // A scope kept past its kernel (in a static, say) ends with the kernel's core thread,
  // which may be gone by now: only a live kernel's scope ends here.
  if (port_ && !kernel_alive_.expired()) port_->EndScope();
}

Kernel::~Kernel() = default;

Kernel::Kernel(base::CorePort& port, CallLayout& layout, std::vector<int> grid,
               std::string call_name)
    : port_(port),
      device_(static_cast<int>(port.chip())),
      core_(port.core_index()),
      layout_(layout),
      grid_(std::move(grid)),
      call_name_(std::move(call_name)),
      program_ids_(grid_.size(), 0) {}

int Kernel::program_id(int axis) const {
  if (axis < 0 || axis >= static_cast<int>(grid_.size())) {
    throw Error(ErrorKind::kKernelMisuse, "program_id(" + std::to_string(axis) +
                                              ") is out of range: the grid has " +
                                              std::to_string(grid_.size()) + " axes.");
  }
  return program_ids_[axis];
}

int Kernel::num_programs(int axis) const {
  if (axis < 0 || axis >= static_cast<int>(grid_.size())) {
    throw Error(ErrorKind::kKernelMisuse, "num_programs(" + std::to_string(axis) +
                                              ") is out of range: the grid has " +
                                              std::to_string(grid_.size()) + " axes.");
  }
  return grid_[axis];
}

std::optional<uint64_t> Kernel::grid_seed() const {
  return layout_.config->grid_seed;
}

const std::string& Kernel::dimension_semantics(int axis) const {
  static const std::string kArbitrary = "arbitrary";
  num_programs(axis);  // checks the axis
  return axis < static_cast<int>(dimension_semantics_.size()) ? dimension_semantics_[axis]
                                                              : kArbitrary;
}

const Mesh& Kernel::mesh() const {
  return *layout_.mesh;
}

int Kernel::axis_index(const std::string& axis) const {
  return mesh().CoordsOf(device_id())[mesh().AxisIndex(axis)];
}

int Kernel::axis_size(const std::string& axis) const {
  return mesh().AxisSize(axis);
}

base::Region Kernel::Resolve(const Ref& ref, int device) const {
  base::Region region;
  ResolveInto(ref, device, region);
  return region;
}

// Inline: every DMA asks twice, and each call took as many instructions as the lookup.
[[gnu::always_inline]] inline base::BufferHandle Kernel::BufferOn(const Ref& ref,
                                                                  int device) const {
  return BufferOf(layout_, ref, device, core_, device == device_id());
}

void Kernel::ResolveInto(const Ref& ref, int device, base::Region& region) const {
  if (!ref.in_bounds()) ThrowOutOfBoundsAccess(ref);
  const uint32_t esize = SizeOf(ref.dtype());
  region.buffer = BufferOn(ref, device);
  region.box.element_bytes = esize;
  // In bytes, saturating: a view too large for any buffer then fails the model's bounds
  // check (base::ByteBox) instead of wrapping into it.
  const auto bytes = [esize](int64_t elements) {
    uint64_t n = 0;
    return __builtin_mul_overflow(static_cast<uint64_t>(elements), esize, &n) ? ~uint64_t{0} : n;
  };
  region.box.offset = bytes(ref.binding().offset);
  // Written in place: every DMA resolves two regions.
  const std::span<const int64_t> dims = ref.dims();
  const int64_t* strides = ref.strides().data();
  region.box.counts.resize_for_overwrite(dims.size());
  region.box.strides.resize_for_overwrite(dims.size());
  uint64_t* counts = region.box.counts.data();
  uint64_t* byte_strides = region.box.strides.data();
  for (size_t d = 0; d < dims.size(); ++d) {
    counts[d] = static_cast<uint64_t>(dims[d]);
    byte_strides[d] = bytes(strides[d]);
  }
}

base::SemaphoreHandle Kernel::ResolveSemaphore(const Ref& sem, int device, const char* role) const {
  return ResolveSemaphoreOnCore(sem, device, core_, role);
}

base::SemaphoreHandle Kernel::ResolveSemaphoreOnCore(const Ref& sem, int device, int core,
                                                     const char* role) const {
  if (!sem.is_semaphore() || !sem.dims().empty()) ThrowNotOneSemaphore(sem, role);
  // The barrier semaphore belongs to the collective_id, not to the call: it exists on a
  // device that has not entered the call yet. Each core has its own.
  if (layout_.barrier_slot >= 0 && sem.binding().slot == layout_.barrier_slot) {
    return base::SemaphoreHandle{static_cast<base::ChipId>(device),
                                 BarrierSemaphoreOf(layout_, device, core)};
  }
  const uint32_t base =
      SemaphoreBaseOf(layout_, sem, device, core, device == device_id() && core == core_);
  return base::SemaphoreHandle{static_cast<base::ChipId>(device),
                               base + static_cast<uint32_t>(sem.binding().offset)};
}

inline bool Kernel::Fixed(const Ref& sem) const {
  return static_cast<size_t>(sem.binding().slot) < layout_.slots.size();
}

void Kernel::CheckCopyOperands(const Ref& src, const Ref& dst) const {
  for (const Ref* r : {&src, &dst}) {
    if (r->is_semaphore()) {
      throw Error(ErrorKind::kKernelMisuse,
                  "'" + r->Describe() + "' is a semaphore; a copy moves data between buffers.");
    }
  }
  if (src.same_block(dst)) return;  // a copy of a ref onto a peer's same ref (all_gather_nd)
  const std::span<const int64_t> from = src.dims(), to = dst.dims();
  if (src.dtype() != dst.dtype() || !std::equal(from.begin(), from.end(), to.begin(), to.end())) {
    throw Error(ErrorKind::kKernelMisuse,
                "a copy from '" + src.Describe() + "' (" + TypeString(src.dtype(), src.shape()) +
                    ") to '" + dst.Describe() + "' (" + TypeString(dst.dtype(), dst.shape()) +
                    ") needs the same shape and dtype on both sides; slice them to match.");
  }
}

AsyncCopy Kernel::async_copy(const Ref& src, const Ref& dst, const Ref& sem) {
  CheckCopyOperands(src, dst);
  const base::SemaphoreHandle here = ResolveSemaphore(sem, device_id(), "copy");
  const Ref none;
  return AsyncCopy(this, src, dst, {none, {}, false}, {sem, here, Fixed(sem)}, false, device_id(),
                   src.nbytes());
}

AsyncCopy Kernel::async_remote_copy(const Ref& src, const Ref& dst, const Ref& send_sem,
                                    const Ref& recv_sem, const DeviceId& device) {
  CheckCopyOperands(src, dst);
  const base::SemaphoreHandle send_here = ResolveSemaphore(send_sem, device_id(), "send");
  const base::SemaphoreHandle recv_here = ResolveSemaphore(recv_sem, device_id(), "receive");
  const int target = ResolveDevice(device);
  return AsyncCopy(this, src, dst, {send_sem, send_here, Fixed(send_sem)},
                   {recv_sem, recv_here, Fixed(recv_sem)}, true, target, src.nbytes());
}

void AsyncCopy::start() {
  Kernel& k = *kernel_;
  // Filled in place: the regions are written into the request's own, where returning them
  // made each and moved it. Its lookups keep their order (each can raise): the regions, the
  // receive semaphore, then the send semaphore.
  base::DmaRequest request;
  k.ResolveInto(src_, k.device_id(), request.source);
  if (dst_.same_block(src_)) {
    // One ref on both sides (a copy onto a peer's same ref, as all_gather_nd's): the same
    // box, in the target's buffer; in bounds, as the source was.
    request.destination.buffer = k.BufferOn(dst_, target_device_);
    request.destination.box = request.source.box;
  } else {
    k.ResolveInto(dst_, target_device_, request.destination);
  }
  request.has_send_semaphore = remote_;
  // A remote copy's receive semaphore is the target's: looked up each time, as the target
  // may not have entered the call yet.
  request.recv_semaphore =
      remote_ ? k.ResolveSemaphore(recv_sem_, target_device_, "receive") : RecvHere();
  request.label = label();
  request.xla_collective = k.layout_.xla_collective;
  if (remote_) request.send_semaphore = SendHere();
  k.port_.StartDma(request);
}

base::Label AsyncCopy::label() const {
  return CopyLabel(src_, dst_, remote_, target_device_);
}

base::SemaphoreHandle AsyncCopy::SendHere() const {
  return send_fixed_
             ? base::SemaphoreHandle{static_cast<base::ChipId>(kernel_->device_id()), send_here_}
             : kernel_->ResolveSemaphore(send_sem_, kernel_->device_id(), "send");
}

base::SemaphoreHandle AsyncCopy::RecvHere() const {
  return recv_fixed_
             ? base::SemaphoreHandle{static_cast<base::ChipId>(kernel_->device_id()), recv_here_}
             : kernel_->ResolveSemaphore(recv_sem_, kernel_->device_id(), "receive");
}

void AsyncCopy::wait_send() {
  if (!remote_) {
    throw Error(ErrorKind::kSemaphoreMisuse, "wait_send() on the local copy '" + label().str() +
                                                 "'; a local copy has one semaphore: use wait().");
  }
  if (nbytes() == 0) return;
  kernel_->port_.Wait(SendHere(), static_cast<int64_t>(nbytes()), base::WaitKind::kDmaSend,
                      "wait_send");
}

void AsyncCopy::wait_recv() {
  if (nbytes() == 0) return;
  kernel_->port_.Wait(RecvHere(), static_cast<int64_t>(nbytes()),
                      remote_ ? base::WaitKind::kDmaRecv : base::WaitKind::kDma,
                      remote_ ? "wait_recv" : "wait");
}

void AsyncCopy::wait() {
  if (remote_) wait_send();
  wait_recv();
}

NamedScope Kernel::named_scope(const std::string& name) {
  port_.BeginScope(name);
  return NamedScope(&port_, alive_);
}

NamedScope Kernel::named_scope(const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& details) {
  port_.BeginScope(name, details);
  return NamedScope(&port_, alive_);
}

void Kernel::CheckLocalAccess(const Ref& ref, const char* verb) const {
  if (ref.memory_space() == MemorySpace::kVmem || ref.memory_space() == MemorySpace::kSmem) return;
  throw Error(
      ErrorKind::kKernelMisuse,
      std::string(verb) + " of '" + ref.Describe() + "', which is in " +
          MemorySpaceName(ref.memory_space()) +
          ": Loads are only allowed on VMEM and SMEM references. Copy the data into a "
          "VMEM scratch buffer with async_copy first, or give the operand a VMEM BlockSpec.");
}

Ref Kernel::MakeRef(int slot, std::string name, Shape shape, DType dtype, MemorySpace space,
                    SemaphoreType semaphore_type) const {
  Ref ref = Ref::Make(slot, std::move(name), std::move(shape), dtype, space, semaphore_type);
  ref.AllowOutOfBoundsViews(layout_.config->out_of_bounds_reads ==
                            base::OutOfBoundsReads::kUninitialized);
  return ref;
}

Array Kernel::ReadLocal(const Ref& ref, const std::string& what) {
  Array out(ref.shape(), ref.dtype());
  if (ref.out_of_bounds().empty()) {
    port_.Load(Resolve(ref, device_id()), out.data(), what);
    return out;
  }
  // Outside the ref: what memory no one wrote reads as. Inside: the data.
  const base::Uninitialized fill = UninitializedFor(ref.dtype(), ZeroUninitialized(layout_));
  fill.Fill(0, out.nbytes(), out.data());
  if (const auto part = ref.InBoundsPart()) {
    Array inside(part->first.shape(), ref.dtype());
    port_.Load(Resolve(part->first, device_id()), inside.data(), what);
    out.Place(inside, part->second);
  }
  return out;
}

Array Kernel::load(const Ref& ref) {
  CheckLocalAccess(ref, "a load");
  return ReadLocal(ref, "load of '" + ref.Describe() + "'");
}

void Kernel::store(const Ref& ref, const Array& value) {
  CheckLocalAccess(ref, "a store");
  if (value.shape() != ref.shape() || value.dtype() != ref.dtype()) {
    throw Error(ErrorKind::kKernelMisuse, "a store of " + TypeString(value.dtype(), value.shape()) +
                                              " into '" + ref.Describe() + "' (" +
                                              TypeString(ref.dtype(), ref.shape()) +
                                              ") needs the same shape and dtype.");
  }
  if (port_.functional() && !value.has_data()) {
    throw Error(ErrorKind::kKernelMisuse,
                "a store into '" + ref.Describe() + "' of a placeholder " +
                    TypeString(value.dtype(), value.shape()) +
                    ": it has no data, and a functional run stores values. Store an Array "
                    "with data (a load, a computed value, or Array(shape, dtype) for zeros); "
                    "placeholders are for timing-only runs.");
  }
  port_.Store(Resolve(ref, device_id()), value.data(), "store to '" + ref.Describe() + "'");
}

Ref Kernel::AllocateScoped(const std::string& name, const Shape& shape, DType dtype,
                           MemorySpace space, SemaphoreType semaphore_type,
                           const std::string& label) {
  auto& slots = BindingsOf(layout_, device_id(), core_index());
  SlotBinding binding;
  binding.name = name;
  binding.serial = ++scoped_serial_;
  Ref ref = MakeRef(static_cast<int>(slots.size()), name, shape, dtype, space, semaphore_type);
  ref.MarkScoped(binding.serial);
  if (space == MemorySpace::kSemaphore) {
    binding.semaphore = true;
    const auto kind = semaphore_type == SemaphoreType::kDma       ? base::SemaphoreKind::kDma
                      : semaphore_type == SemaphoreType::kRegular ? base::SemaphoreKind::kRegular
                                                                  : base::SemaphoreKind::kBarrier;
    for (int64_t j = 0; j < ref.size(); ++j) {
      const auto handle =
          port_.AddSemaphore(kind, shape.empty() ? name : name + "[" + std::to_string(j) + "]");
      if (j == 0) binding.semaphore_base = handle.index;
    }
  } else {
    if (space == MemorySpace::kAny) {
      throw Error(ErrorKind::kKernelMisuse, "scoped buffer '" + name +
                                                "' asks for memory space ANY; scoped "
                                                "allocations live in VMEM or SMEM.");
    }
    binding.buffer = port_.Allocate(
        space == MemorySpace::kSmem ? base::MemorySpace::kSmem : base::MemorySpace::kVmem,
        ref.nbytes(), label.empty() ? name + " " + TypeString(dtype, shape) : label,
        UninitializedFor(dtype, ZeroUninitialized(layout_)));
  }
  slots.push_back(binding);
  return ref;
}

void Kernel::FreeScoped(const Ref& ref) {
  const int device = device_id();
  const auto& slots = BindingsOf(layout_, device, core_index());
  const size_t slot = static_cast<size_t>(ref.binding().slot);
  const uint64_t serial = ref.binding().scope_serial;
  if (serial == 0) {
    throw Error(ErrorKind::kKernelMisuse,
                "FreeScoped('" + ref.Describe() +
                    "'), but it is not a scoped buffer: FreeScoped frees what AllocateScoped "
                    "returned, and a call's operands and scratch are freed when it ends.");
  }
  if (slot >= slots.size() || !slots[slot].live || slots[slot].serial != serial) {
    throw Error(ErrorKind::kKernelMisuse,
                "scoped buffer '" + ref.Describe() + "' is freed twice on device " +
                    std::to_string(device) +
                    ": free each AllocateScoped ref once (run_scoped and pipelines free "
                    "theirs when their scope ends).");
  }
  const SlotBinding binding = slots[slot];
  if (binding.semaphore) {
    for (int64_t j = 0; j < ref.size(); ++j) {
      const base::SemaphoreHandle handle{static_cast<base::ChipId>(device),
                                         binding.semaphore_base + static_cast<uint32_t>(j)};
      const int64_t value = port_.Peek(handle);
      if (value != 0) {
        throw Error(ErrorKind::kSemaphoreNotZero,
                    "scoped semaphore '" + port_.SemaphoreName(handle) + "' is " +
                        std::to_string(value) + " at the end of its scope on device " +
                        std::to_string(device) +
                        ", but every semaphore must be 0 when its scope ends. Wait for every "
                        "DMA you start and consume every signal inside the scope.");
      }
    }
  } else {
    port_.Free(binding.buffer);
  }
  auto& live = BindingsOf(layout_, device, core_index());
  live[slot].live = false;
  while (live.size() > layout_.slots.size() && !live.back().live)
    live.pop_back();
}

}  // namespace tpusim::dsl
