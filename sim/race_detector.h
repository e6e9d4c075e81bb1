#pragma once

// Happens-before race detection for DMAs and kernel loads and stores (the checks of
// Pallas interpret mode's detect_races, docs/references.md §5), so a race is reported whether
// or not the simulated timing happened to hide it.
//
// Each core has a vector clock with one entry per chip (FastTrack-style epochs: a core
// ticks its own entry when it releases, by a signal or a DMA start). Semaphores carry
// clocks from signals and from DMAs that complete into them; a wait or read acquires them.
// A DMA's completion is known to a core once some core acquired it (waited on the
// semaphore the DMA completed into) at an epoch the first core knows: that acquisition is
// what orders the DMA before later accesses, never the DMA having finished in simulated
// time. Per buffer the detector keeps the accesses no later access has superseded.
//
// Every race involves a DMA: loads and stores only touch the core's own VMEM/SMEM, and a
// DMA reads only its issuer's memory, so every access but a remote DMA's write is made
// by the buffer's own chip, in program order.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/base_names.h"

namespace tpusim::sim {

class RaceDetector {
 public:
  using DmaId = uint32_t;

  // One side of a race, and the race, as the report and the trace name them.
  using Access = RaceAccess;
  using Race = RaceReport;
  // Called with the race found; expected to throw (the run fails with kRace).
  using Reporter = std::function<void(const Race&)>;

  RaceDetector(uint32_t chips, Reporter reporter);

  // Named scopes of each core, so a report names the grid step.
  void BeginScope(ChipId core, std::string_view name);
  void EndScope(ChipId core);

  // A kernel load (or a compute op's read) or store of local memory.
  void CoreAccess(ChipId core, const Region& region, bool write, std::string_view what,
                  Picoseconds now);

  // Checks a DMA's reads and writes against every access they are not ordered after,
  // records them, and returns the id the completion calls below take.
  DmaId StartDma(ChipId issuer, const DmaRequest& request, Picoseconds now);
  // Its last byte left the source: a wait on `send` orders its reads.
  void DmaSent(DmaId dma, const SemaphoreHandle* send);
  // Its last byte landed: a wait on `recv` orders its reads and writes.
  void DmaLanded(DmaId dma, SemaphoreHandle recv);

  // A signal's clock leaves the issuer now and joins the semaphore when it arrives.
  std::vector<uint32_t> Release(ChipId core);
  void SignalArrived(SemaphoreHandle semaphore, const std::vector<uint32_t>& clock);
  // A wait (or read) on `semaphore` by its own core.
  void Acquire(ChipId core, SemaphoreHandle semaphore);

  void Free(BufferHandle buffer);

 private:
  using Clock = std::vector<uint32_t>;
  struct Acquired {
    ChipId chip;
    uint32_t epoch;
  };
  struct Dma {
    ChipId issuer = 0;
    Clock start;  // the issuer's clock when it started; dropped once it has landed
    std::string label;
    Picoseconds started = 0;
    std::shared_ptr<const std::string> where;
    std::vector<Acquired> reads_done;   // acquisitions that order its reads
    std::vector<Acquired> writes_done;  // ... and its writes
  };
  struct Entry {
    ByteBox box;
    uint64_t lo = 0, hi = 0;  // byte range, a cheap first overlap test
    bool write = false;
    bool dma = false;
    DmaId id = 0;  // dma entries
    // Core entries: the owner's epoch, and how a report names the access.
    ChipId chip = 0;
    uint32_t epoch = 0;
    std::string what;
    Picoseconds when = 0;
    std::shared_ptr<const std::string> where;
  };
  struct SemaphoreState {
    Clock clock;
    std::vector<std::pair<DmaId, bool>>
        pending;  // completed DMAs not yet acquired; true: writes too
  };

  // Whether `entry` is ordered before an access by a core with clock `clock`.
  bool OrderedBefore(const Entry& entry, const Clock& clock) const;
  // Checks an access against `buffer`'s entries, then records it, dropping the entries it
  // supersedes.
  void Check(const Clock& clock, const Region& region, bool write, const Access& access);
  void Record(const Region& region, Entry entry);
  Access Describe(const Entry& entry, BufferHandle buffer) const;
  SemaphoreState& Semaphore(SemaphoreHandle handle);
  void Release(DmaId dma, SemaphoreHandle semaphore, bool writes);
  static void Join(Clock& into, const Clock& from);
  static uint64_t Key(const BufferHandle& b);

  Reporter reporter_;
  std::vector<Clock> cores_;
  std::vector<std::vector<std::string>> scopes_;
  std::vector<std::shared_ptr<const std::string>> where_;
  std::deque<Dma> dmas_;
  std::unordered_map<uint64_t, std::vector<Entry>> buffers_;
  std::vector<std::vector<SemaphoreState>> semaphores_;  // by chip, then index
};

// "race on chip 1 (x=1), VMEM buffer 'tile f32[8,128]': ...": both accesses with who made
// them, when and in which grid step, and the fix.
std::string RaceMessage(const RaceDetector::Race& race,
                        const std::function<std::string(ChipId)>& chip_name,
                        const std::string& buffer);

}  // namespace tpusim::sim
