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
// time. Per buffer the detector keeps the accesses no later access has superseded, indexed
// by their first byte so a check visits only the accesses near its bytes.
//
// Retirement: clocks only grow, so an access ordered before every core's clock is ordered
// before every access any core makes from then on (each check runs with some core's clock):
// no later access can race it, and it is dropped. The detector looks for such accesses
// each time the number it keeps has doubled, so the sweeps cost O(1) per access. A chip
// that never learns of another's progress (two rings on different rows of a mesh) keeps
// the other's accesses alive: it could still DMA into those bytes, and that would race.
//
// Every race involves a DMA: loads and stores only touch the core's own VMEM/SMEM, and a
// DMA reads only its issuer's memory, so every access but a remote DMA's write is made
// by the buffer's own chip, in program order.

#include <cstdint>
#include <functional>
#include <map>
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

  // Accesses kept for checking (neither superseded, retired nor freed): what the detector's
  // memory and the cost of a check grow with.
  size_t live_accesses() const { return live_; }

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
    bool sent = false, landed = false;  // both: no completion call is left to come
  };
  struct Entry {
    ByteBox box;
    uint64_t lo = 0, hi = 0;  // byte range, a cheap first overlap test
    bool write = false;
    uint64_t order = 0;        // when it was recorded: a report names the earliest race
    std::shared_ptr<Dma> dma;  // dma entries
    // Core entries: the owner's epoch, and how a report names the access.
    ChipId chip = 0;
    uint32_t epoch = 0;
    std::string what;
    Picoseconds when = 0;
    std::shared_ptr<const std::string> where;
  };
  struct SemaphoreState {
    Clock clock;
    std::vector<std::pair<std::shared_ptr<Dma>, bool>>
        pending;  // completed DMAs not yet acquired; true: writes too
  };
  // A buffer's entries by first byte; `widest` bounds hi - lo, so the entries overlapping
  // [lo, hi) all start in [lo - widest, hi).
  struct Entries {
    std::multimap<uint64_t, Entry> by_lo;
    uint64_t widest = 0;
  };

  // Whether `entry` is ordered before an access by a core with clock `clock`.
  static bool OrderedBefore(const Entry& entry, const Clock& clock);
  // The entries of `entries` that may overlap [lo, hi).
  static std::pair<std::multimap<uint64_t, Entry>::iterator,
                   std::multimap<uint64_t, Entry>::iterator>
  Near(Entries& entries, uint64_t lo, uint64_t hi);
  // Drops every entry ordered before all cores' clocks, when enough have been recorded.
  void RetireIfDue();
  // Checks an access against `buffer`'s entries, then records it, dropping the entries it
  // supersedes.
  void Check(const Clock& clock, const Region& region, bool write, const Access& access);
  void Record(const Region& region, Entry entry);
  Access Describe(const Entry& entry, BufferHandle buffer) const;
  SemaphoreState& Semaphore(SemaphoreHandle handle);
  void Release(const std::shared_ptr<Dma>& dma, SemaphoreHandle semaphore, bool writes);
  void Forget(DmaId dma);  // drops the id once both completions have come
  static void Join(Clock& into, const Clock& from);
  static uint64_t Key(const BufferHandle& b);

  Reporter reporter_;
  std::vector<Clock> cores_;
  std::vector<std::vector<std::string>> scopes_;
  std::vector<std::shared_ptr<const std::string>> where_;
  // DMAs whose completions are still to come; entries and semaphores share the rest.
  std::unordered_map<DmaId, std::shared_ptr<Dma>> in_flight_;
  DmaId next_dma_ = 0;
  std::unordered_map<uint64_t, Entries> buffers_;
  uint64_t recorded_ = 0;  // entries ever recorded, for Entry::order
  size_t live_ = 0;
  size_t next_sweep_ = 0;
  std::vector<std::vector<SemaphoreState>> semaphores_;  // by chip, then index
};

// "race on chip 1 (x=1), VMEM buffer 'tile f32[8,128]': ...": both accesses with who made
// them, when and in which grid step, and the fix.
std::string RaceMessage(const RaceDetector::Race& race,
                        const std::function<std::string(ChipId)>& chip_name,
                        const std::string& buffer);

}  // namespace tpusim::sim
