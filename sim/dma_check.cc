#include "sim/dma_dispatcher.h"

#include <bit>
#include <optional>
#include <string>

#include "sim/memory.h"

// The checks every DMA passes before it starts (DmaDispatcher::Check): kept apart from the
// DMA's movement, which is most of the dispatcher.

namespace tpusim::sim {

// [PL]'s distributed guide: on TPU v5e "devices can only route to a power of 2 offset from
// themselves" (docs/references.md §2). We read the offset per mesh axis and modulo the axis,
// as the guide's own ring examples count it (the last device sends to the first, offset +1):
// (destination - source) mod n, in either direction round the axis. 0 (the same index) or a
// power of two one way or the other passes.
void DmaDispatcher::CheckPowerOfTwoOffset(const DmaRequest& request) const {
  const Torus& torus = slice_.torus();
  const ChipId to = request.destination.buffer.chip;
  const Coords from_at = torus.CoordsOf(id_);
  const Coords to_at = torus.CoordsOf(to);
  // The slice axis of a multi-slice topology is the data-center network's, not ICI routing.
  for (int axis = torus.slices_over_dcn() ? 1 : 0; axis < torus.axes(); ++axis) {
    const int size = torus.axis_size(axis);
    const int offset = ((to_at[axis] - from_at[axis]) % size + size) % size;
    if (offset == 0 || std::has_single_bit(static_cast<unsigned>(offset)) ||
        std::has_single_bit(static_cast<unsigned>(size - offset)))
      continue;
    std::string message = "DMA '" + request.label.str() + "' goes from " + torus.Describe(id_) +
                          " to " + torus.Describe(to) + ", ";
    message += "an offset of " + std::to_string(offset);
    message += " (or -" + std::to_string(size - offset) + ") chips along axis '" +
               torus.axis_names()[axis] +
               "', but a TPU v5e chip routes a remote DMA only to a power-of-two offset from "
               "itself (the Pallas distributed guide, docs/references.md §2). Send it in hops "
               "of power-of-two offsets, or set allow_nonphysical: true in the topology to "
               "study a hypothetical machine.";
    throw Error(ErrorKind::kKernelMisuse, message);
  }
}

DmaDispatcher::Checked DmaDispatcher::Check(const DmaRequest& request) {
  const ChipId issuer = id_;
  const Torus& torus = slice_.torus();
  // The destination chip's table of semaphores, asked for first: its line (another chip's, cold on
  // a pod) then comes in while the buffers are checked.
  if (request.destination.buffer.chip < torus.chips())
    __builtin_prefetch(&slice_.semaphores(request.destination.buffer.chip));
  // Every DMA passes here, so the description is only built when a check fails.
  const auto what = [&] {
    return "DMA '" + request.label.str() + "' from " + torus.Describe(issuer);
  };
  // A buffer checked live before is still, unless the slice has freed a remembered one since.
  const uint64_t frees = slice_.buffer_frees();
  DmaBufferCache& buffers = remembered_->buffers;
  auto check_buffer = [&](const BufferHandle& b, const char* role) {
    if (const std::optional<DmaBufferCache::Found> known = buffers.Find(b, frees)) return *known;
    if (!slice_.BufferExists(b)) slice_.CheckBuffer(b, role, what());
    Memory& memory = slice_.memory(b);
    const DmaBufferCache::Found found{memory.Size(b.index), memory.Address(b.index, 0)};
    memory.NoteRemembered(b.index);  // its free must make every engine forget
    buffers.Remember(b, frees, found);
    return found;
  };
  Checked checked;
  const DmaBufferCache::Found source = check_buffer(request.source.buffer, "read");
  if (request.destination.buffer.chip >= torus.chips()) {
    throw Error(ErrorKind::kKernelMisuse,
                what() + " targets chip " + std::to_string(request.destination.buffer.chip) +
                    ", which is outside the " + std::to_string(torus.chips()) + "-chip slice.");
  }
  const DmaBufferCache::Found destination = check_buffer(request.destination.buffer, "written");
  if (request.source.buffer.chip != issuer) {
    throw Error(ErrorKind::kKernelMisuse,
                what() +
                    " reads from another chip's memory; a DMA reads local memory and may "
                    "write anywhere. Start it on the chip that holds the data.");
  }
  auto check_bounds = [&](const Region& r, uint64_t size, const char* role) {
    if (r.box.end() > size) {
      throw Error(ErrorKind::kOutOfBounds,
                  what() + ": its " + role + " region " + r.box.DescribeEnd() + " of '" +
                      slice_.memory(r.buffer).Label(r.buffer.index) + "', which has only " +
                      std::to_string(size) + " bytes.");
    }
  };
  check_bounds(request.source, source.size, "source");
  check_bounds(request.destination, destination.size, "destination");
  checked.source_base = source.address;
  checked.destination_base = destination.address;
  if (request.source.box.bytes() != request.destination.box.bytes()) {
    throw Error(ErrorKind::kKernelMisuse,
                what() + " copies " + std::to_string(request.source.box.bytes()) +
                    " bytes into a destination of " +
                    std::to_string(request.destination.box.bytes()) +
                    " bytes; source and destination must have the same size.");
  }
  auto check_dma_semaphore = [&](SemaphoreHandle h, ChipId expected_chip,
                                 const char* role) -> Semaphore* {
    if (!slice_.HasSemaphore(h)) slice_.CheckSemaphore(h, role, what());  // what(): a string
    Semaphore& s = slice_.semaphore(h);
    if (h.chip != expected_chip || s.kind() != SemaphoreKind::kDma) {
      throw Error(ErrorKind::kSemaphoreMisuse,
                  what() + ": its " + role + " semaphore '" + s.name() + "' is a " +
                      SemaphoreKindName(s.kind()) +
                      " semaphore; DMAs count bytes on SemaphoreType::DMA semaphores.");
    }
    return &s;
  };
  // Found in the chips' tables, whose first lines say which semaphores count bytes: a DMA's
  // check reads neither the semaphores (the receive one is on another chip, a miss on a pod)
  // nor a memo of its own (a further line per engine and pair). Anything amiss takes the full
  // checks, in their order and with their messages.
  const ChipId to = request.destination.buffer.chip;
  const SemaphoreHandle* send = request.has_send_semaphore ? &request.send_semaphore : nullptr;
  checked.recv = request.recv_semaphore.chip == to
                     ? slice_.semaphores(to).FindDma(request.recv_semaphore.index)
                     : nullptr;
  if (send)
    checked.send = send->chip == issuer ? slice_.semaphores(issuer).FindDma(send->index) : nullptr;
  if (!checked.recv || (send && !checked.send)) [[unlikely]] {
    checked.recv = check_dma_semaphore(request.recv_semaphore, to, "receive");
    if (send) checked.send = check_dma_semaphore(*send, issuer, "send");
  }
  if (power_of_two_offsets_ && !request.xla_collective && request.destination.buffer.chip != issuer)
    CheckPowerOfTwoOffset(request);
  return checked;
}

}  // namespace tpusim::sim
