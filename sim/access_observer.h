#pragma once

// What the model tells an observer of the memory accesses it makes and of the
// synchronisations that order them: a core's loads and stores, a DMA's start and its two
// completions, a signal's leaving and arriving, a wait that acquires what a semaphore
// carries, a buffer freed, and the named scopes a report names a grid step by. The modules
// report to the slice (SliceState::observer); they do not know who listens. The race
// checker (sim/race_check.h) is one observer, attached only to runs that check races; a
// run without one pays a null test per report.
//
// Cores are named by their chip and their index on it, DMAs and signals by the id the
// observer handed out when they started.

#include <cstdint>
#include <string_view>

#include "sim/base_names.h"

namespace tpusim::sim {

class AccessObserver {
 public:
  virtual ~AccessObserver() = default;

  virtual void BeginScope(ChipId chip, uint32_t core, std::string_view name) = 0;
  virtual void EndScope(ChipId chip, uint32_t core) = 0;

  // A kernel load (or a compute op's read) or store of the core's own memory, at `now`.
  virtual void CoreAccess(ChipId chip, uint32_t core, const Region& region, bool write,
                          std::string_view what, Picoseconds now) = 0;

  // A DMA issued by `core` of `chip` starts; returns the id DmaSent and DmaLanded take.
  virtual uint32_t DmaStarted(ChipId chip, uint32_t core, const DmaRequest& request,
                              Picoseconds now) = 0;
  // Its last byte left the source (`send`: the send semaphore, if it has one).
  virtual void DmaSent(uint32_t dma, const SemaphoreHandle* send) = 0;
  // Its last byte landed; `recv` counts it.
  virtual void DmaLanded(uint32_t dma, SemaphoreHandle recv) = 0;

  // A signal leaves `core` of `chip` now; returns the id SignalArrived takes when it reaches
  // `target` (at once on the same chip, after its route otherwise).
  virtual uint32_t SignalSent(ChipId chip, uint32_t core) = 0;
  virtual void SignalArrived(uint32_t signal, SemaphoreHandle target) = 0;

  // A wait on (or a read of) `semaphore` by `core` of `chip`: it has seen what the semaphore
  // was given so far.
  virtual void Acquired(ChipId chip, uint32_t core, SemaphoreHandle semaphore) = 0;

  virtual void Freed(BufferHandle buffer) = 0;
};

}  // namespace tpusim::sim
