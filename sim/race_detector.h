#pragma once

// Happens-before race detection for DMAs and kernel loads and stores (the checks of
// Pallas interpret mode's detect_races, docs/references.md §5), so a race is reported whether
// or not the simulated timing happened to hide it.
//
// Each core has a vector clock with one entry per core of the slice (FastTrack-style
// epochs: a core
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

  // `cores`: each chip's TensorCore count. The calls below name a core by its agent number,
  // Agent(chip, core): on a slice of single-core chips, the chip id.
  RaceDetector(const std::vector<uint32_t>& cores, Reporter reporter);
  uint32_t Agent(ChipId chip, uint32_t core) const { return agent_base_[chip] + core; }

  // Named scopes of each core, so a report names the grid step.
  void BeginScope(uint32_t core, std::string_view name);
  void EndScope(uint32_t core);

  // A kernel load (or a compute op's read) or store of local memory.
  void CoreAccess(uint32_t core, const Region& region, bool write, std::string_view what,
                  Picoseconds now);

  // Checks a DMA's reads and writes against every access they are not ordered after,
  // records them, and returns the id the completion calls below take. `issuer` is the
  // issuing core's agent.
  DmaId StartDma(uint32_t issuer, const DmaRequest& request, Picoseconds now);
  // Its last byte left the source: a wait on `send` orders its reads.
  void DmaSent(DmaId dma, const SemaphoreHandle* send);
  // Its last byte landed: a wait on `recv` orders its reads and writes.
  void DmaLanded(DmaId dma, SemaphoreHandle recv);

  // A signal's clock leaves the issuer now and joins the semaphore when it arrives.
  std::vector<uint32_t> Release(uint32_t core);
  void SignalArrived(SemaphoreHandle semaphore, const std::vector<uint32_t>& clock);
  // A wait (or read) on `semaphore` by its own core.
  void Acquire(uint32_t core, SemaphoreHandle semaphore);

  void Free(BufferHandle buffer);

  // Accesses kept for checking (neither superseded, retired nor freed): what the detector's
  // memory and the cost of a check grow with.
  size_t live_accesses() const { return live_; }

 private:
  using Clock = std::vector<uint32_t>;
  struct Acquired {
    uint32_t agent;
    uint32_t epoch;
  };
  struct Dma {
    uint32_t issuer = 0;  // agent
    Clock start;          // the issuer's clock when it started; dropped once it has landed
    base::Label label;
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
    // Core entries: the owner's agent and epoch, and how a report names the access.
    uint32_t agent = 0;
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
  // The earliest recorded entry an access by a core with clock `clock` races with, or null.
  // The access is described (ReportRace) only when there is a race: describing every DMA's
  // two accesses up front cost more than the check.
  const Entry* FindRace(const Clock& clock, const Region& region, bool write);
  void ReportRace(const Entry& earlier, const Region& region, const Access& access);
  void Record(const Region& region, Entry entry);
  Access Describe(const Entry& entry, BufferHandle buffer) const;
  Access MakeAccess(uint32_t agent, std::string what, Picoseconds when,
                    const std::string& where) const;
  SemaphoreState& Semaphore(SemaphoreHandle handle);
  void Release(const std::shared_ptr<Dma>& dma, SemaphoreHandle semaphore, bool writes);
  void Forget(DmaId dma);  // drops the id once both completions have come
  static void Join(Clock& into, const Clock& from);

  Reporter reporter_;
  std::vector<uint32_t> agent_base_;  // by chip: its core 0's agent
  std::vector<ChipId> agent_chip_;    // by agent
  std::vector<uint32_t> agent_core_;  // by agent
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
// them, when and in which grid step, and the fix. `core_name` names a chip's core ("chip 1
// (x=1)", or "chip 1 (x=1) core 1" on a chip of several); `place` where the buffer is (its
// chip, or for VMEM and SMEM its core).
std::string RaceMessage(const RaceDetector::Race& race,
                        const std::function<std::string(ChipId, uint32_t)>& core_name,
                        const std::string& place, const std::string& buffer);

}  // namespace tpusim::sim
