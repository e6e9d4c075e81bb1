#include "sim/race_detector.h"

#include <algorithm>

#include "base/text.h"
#include "sim/byte_box.h"
#include "sim/chunk.h"

namespace tpusim::sim {

namespace {

// Entries kept before the first retirement sweep (plus one per core).
constexpr size_t kFirstSweep = 256;

bool SameBox(const ByteBox& a, const ByteBox& b) {
  return a.offset == b.offset && a.counts == b.counts && a.strides == b.strides &&
         a.element_bytes == b.element_bytes;
}

}  // namespace

RaceDetector::RaceDetector(const std::vector<uint32_t>& cores, Reporter reporter)
    : reporter_(std::move(reporter)), semaphores_(cores.size()) {
  for (ChipId chip = 0; chip < cores.size(); ++chip) {
    agent_base_.push_back(static_cast<uint32_t>(agent_chip_.size()));
    for (uint32_t core = 0; core < cores[chip]; ++core) {
      agent_chip_.push_back(chip);
      agent_core_.push_back(core);
    }
  }
  const size_t agents = agent_chip_.size();
  cores_.assign(agents, Clock(agents, 0));
  scopes_.resize(agents);
  where_.assign(agents, std::make_shared<const std::string>());
  // Epoch 0 means "nothing known": each core starts at 1 of its own entry.
  for (size_t a = 0; a < agents; ++a)
    cores_[a][a] = 1;
}

RaceDetector::Access RaceDetector::MakeAccess(uint32_t agent, std::string what, Picoseconds when,
                                              const std::string& where) const {
  return Access{agent_chip_[agent], std::move(what), when, where, agent_core_[agent]};
}

void RaceDetector::BeginScope(uint32_t core, std::string_view name) {
  scopes_[core].emplace_back(name);
  where_[core] = std::make_shared<const std::string>(
      where_[core]->empty() ? std::string(name) : *where_[core] + " > " + std::string(name));
}

void RaceDetector::EndScope(uint32_t core) {
  if (scopes_[core].empty()) return;
  scopes_[core].pop_back();
  std::string where;
  for (const auto& s : scopes_[core])
    base::AppendListItem(where, " > ", s);
  where_[core] = std::make_shared<const std::string>(std::move(where));
}

void RaceDetector::Join(Clock& into, const Clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

RaceDetector::SemaphoreState& RaceDetector::Semaphore(SemaphoreHandle handle) {
  auto& list = semaphores_[handle.chip];
  if (list.size() <= handle.index) list.resize(handle.index + 1);
  return list[handle.index];
}

bool RaceDetector::OrderedBefore(const Entry& entry, const Clock& clock) {
  if (!entry.dma) return clock[entry.agent] >= entry.epoch;
  const auto& done = entry.write ? entry.dma->writes_done : entry.dma->reads_done;
  return std::any_of(done.begin(), done.end(),
                     [&](const Acquired& a) { return clock[a.agent] >= a.epoch; });
}

std::pair<std::multimap<uint64_t, RaceDetector::Entry>::iterator,
          std::multimap<uint64_t, RaceDetector::Entry>::iterator>
RaceDetector::Near(Entries& entries, uint64_t lo, uint64_t hi) {
  const uint64_t from = lo > entries.widest ? lo - entries.widest : 0;
  return {entries.by_lo.lower_bound(from), entries.by_lo.lower_bound(hi)};
}

RaceDetector::Access RaceDetector::Describe(const Entry& entry, BufferHandle buffer) const {
  if (!entry.dma) return MakeAccess(entry.agent, entry.what, entry.when, *entry.where);
  const Dma& d = *entry.dma;
  const bool remote = agent_chip_[d.issuer] != buffer.chip;
  return MakeAccess(d.issuer,
                    "DMA '" + d.label.str() + "'" + (remote ? " (remote)" : "") +
                        (entry.write ? " writing into it" : " reading from it"),
                    d.started, *d.where);
}

const RaceDetector::Entry* RaceDetector::FindRace(const Clock& clock, const Region& region,
                                                  bool write) {
  if (region.box.bytes() == 0) return nullptr;
  auto found = buffers_.find(BufferKey(region.buffer));
  if (found == buffers_.end()) return nullptr;
  const uint64_t lo = region.box.offset, hi = region.box.end();
  const bool dense = hi - lo == region.box.bytes();
  // The earliest recorded of the entries it races, as a scan in recording order would find.
  const Entry* earliest = nullptr;
  const auto [first, last] = Near(found->second, lo, hi);
  for (auto it = first; it != last; ++it) {
    const Entry& e = it->second;
    if (earliest && earliest->order < e.order) continue;
    if (!(e.write || write) || e.hi <= lo || hi <= e.lo) continue;
    if (OrderedBefore(e, clock)) continue;
    const bool e_dense = e.hi - e.lo == e.box.bytes();
    if (!(dense && e_dense) && !BoxesOverlap(e.box, region.box)) continue;
    earliest = &e;
  }
  return earliest;
}

void RaceDetector::ReportRace(const Entry& e, const Region& region, const Access& access) {
  Race race{region.buffer, Describe(e, region.buffer), access, ""};
  if (e.dma && e.write) {
    race.fix =
        "Wait for the DMA writing into the buffer (wait_recv on its receive semaphore, "
        "or wait() for a local copy) before this access, or give each in-flight copy "
        "its own buffer (double buffering).";
  } else if (e.dma) {
    race.fix =
        "Wait for the DMA reading from the buffer (wait_send, or wait() for a local "
        "copy) before overwriting it.";
  }
  if (access.chip != race.earlier.chip) {
    base::AppendListItem(
        race.fix, " ",
        "The accesses come from two chips, so the chip that waits must tell the "
        "other: signal a semaphore that the second one waits on before it goes ahead "
        "(a capacity semaphore, as the Pallas guide's psum does).");
  } else if (access.core != race.earlier.core) {
    base::AppendListItem(
        race.fix, " ",
        "The accesses come from the chip's two TensorCores, so the core that waits must "
        "tell the other: signal a semaphore of the other core (semaphore_signal with "
        "core_index) that it waits on before it goes ahead, or give each core its own part "
        "of the buffer.");
  }
  reporter_(race);
}

void RaceDetector::Record(const Region& region, Entry entry) {
  if (region.box.bytes() == 0) return;
  entry.box = region.box;
  entry.lo = region.box.offset;
  entry.hi = region.box.end();
  entry.order = recorded_++;
  const bool dense = entry.hi - entry.lo == entry.box.bytes();
  Entries& entries = buffers_[BufferKey(region.buffer)];
  // An access supersedes the covered entries that future accesses could only race with by
  // racing with it too: those it conflicts with (checked ordered before it), and core
  // accesses (every later access but a remote DMA write is the owner's, in program order,
  // and a remote DMA write conflicts with the newer entry as well).
  auto superseded = [&](const Entry& old) {
    if (old.dma && !old.write && !entry.write) return false;
    if (dense) return entry.lo <= old.lo && old.hi <= entry.hi;
    return SameBox(old.box, entry.box);
  };
  const auto [first, last] = Near(entries, entry.lo, entry.hi);
  for (auto it = first; it != last;) {
    if (superseded(it->second)) {
      it = entries.by_lo.erase(it);
      --live_;
    } else {
      ++it;
    }
  }
  entries.widest = std::max(entries.widest, entry.hi - entry.lo);
  entries.by_lo.emplace(entry.lo, std::move(entry));
  ++live_;
  RetireIfDue();
}

void RaceDetector::RetireIfDue() {
  if (live_ < next_sweep_) return;
  // floor[c]: what every core knows of core c's clock. An entry ordered before it is
  // ordered before every core's clock, now and (clocks only grow) from now on.
  Clock floor = cores_[0];
  for (const Clock& clock : cores_)
    for (size_t c = 0; c < floor.size(); ++c)
      floor[c] = std::min(floor[c], clock[c]);
  live_ = 0;
  for (auto& [key, entries] : buffers_) {
    entries.widest = 0;
    for (auto it = entries.by_lo.begin(); it != entries.by_lo.end();) {
      if (OrderedBefore(it->second, floor)) {
        it = entries.by_lo.erase(it);
      } else {
        entries.widest = std::max(entries.widest, it->second.hi - it->second.lo);
        ++live_;
        ++it;
      }
    }
  }
  // The next sweep comes once as many entries again are kept, so the sweeps (and the
  // floor's cores x cores minimum) cost O(1) per entry recorded, and O(cores).
  next_sweep_ = std::max(2 * live_, kFirstSweep + cores_.size());
}

void RaceDetector::CoreAccess(uint32_t core, const Region& region, bool write,
                              std::string_view what, Picoseconds now) {
  const Clock& clock = cores_[core];
  if (const Entry* earlier = FindRace(clock, region, write))
    ReportRace(*earlier, region, MakeAccess(core, std::string(what), now, *where_[core]));
  Entry entry;
  entry.write = write;
  entry.agent = core;
  entry.epoch = clock[core];
  entry.what = std::string(what);
  entry.when = now;
  entry.where = where_[core];
  Record(region, std::move(entry));
}

RaceDetector::DmaId RaceDetector::StartDma(uint32_t issuer, const DmaRequest& request,
                                           Picoseconds now) {
  Clock& clock = cores_[issuer];
  if (const Entry* earlier = FindRace(clock, request.source, false)) {
    ReportRace(*earlier, request.source,
               MakeAccess(issuer, "DMA '" + request.label.str() + "' reading from it", now,
                          *where_[issuer]));
  }
  if (const Entry* earlier = FindRace(clock, request.destination, true)) {
    std::string what = "DMA '" + request.label.str() + "'";
    if (request.destination.buffer.chip != agent_chip_[issuer]) what += " (remote)";
    what += " writing into it";
    ReportRace(*earlier, request.destination,
               MakeAccess(issuer, std::move(what), now, *where_[issuer]));
  }
  const DmaId id = next_dma_++;
  auto dma = std::make_shared<Dma>();
  Dma& d = *dma;
  d.issuer = issuer;
  d.start = clock;
  d.label = request.label;
  d.started = now;
  d.where = where_[issuer];
  ++clock[issuer];
  Entry entry;
  entry.dma = dma;
  in_flight_.emplace(id, std::move(dma));
  Record(request.source, entry);
  entry.write = true;
  Record(request.destination, entry);
  return id;
}

void RaceDetector::Release(const std::shared_ptr<Dma>& dma, SemaphoreHandle semaphore,
                           bool writes) {
  SemaphoreState& s = Semaphore(semaphore);
  Join(s.clock, dma->start);
  s.pending.emplace_back(dma, writes);
}

void RaceDetector::DmaSent(DmaId dma, const SemaphoreHandle* send) {
  const auto found = in_flight_.find(dma);
  if (found == in_flight_.end()) return;
  if (send) Release(found->second, *send, false);
  found->second->sent = true;
  Forget(dma);
}

void RaceDetector::DmaLanded(DmaId dma, SemaphoreHandle recv) {
  const auto found = in_flight_.find(dma);
  if (found == in_flight_.end()) return;
  Dma& d = *found->second;
  Release(found->second, recv, true);
  Clock().swap(d.start);  // landing comes last; its clock now lives in the semaphores
  d.landed = true;
  Forget(dma);
}

void RaceDetector::Forget(DmaId dma) {
  const auto found = in_flight_.find(dma);
  if (found->second->sent && found->second->landed) in_flight_.erase(found);
}

std::vector<uint32_t> RaceDetector::Release(uint32_t core) {
  Clock snapshot = cores_[core];
  ++cores_[core][core];
  return snapshot;
}

void RaceDetector::SignalArrived(SemaphoreHandle semaphore, const std::vector<uint32_t>& clock) {
  Join(Semaphore(semaphore).clock, clock);
}

void RaceDetector::Acquire(uint32_t core, SemaphoreHandle semaphore) {
  SemaphoreState& s = Semaphore(semaphore);
  Clock& clock = cores_[core];
  Join(clock, s.clock);
  const Acquired at{core, clock[core]};
  for (const auto& [dma, writes] : s.pending) {
    dma->reads_done.push_back(at);
    if (writes) dma->writes_done.push_back(at);
  }
  s.pending.clear();
}

void RaceDetector::Free(BufferHandle buffer) {
  const auto found = buffers_.find(BufferKey(buffer));
  if (found == buffers_.end()) return;
  live_ -= found->second.by_lo.size();
  buffers_.erase(found);
}

std::string RaceMessage(const RaceDetector::Race& race,
                        const std::function<std::string(ChipId, uint32_t)>& core_name,
                        const std::string& place, const std::string& buffer) {
  auto describe = [&](const RaceDetector::Access& a) {
    return a.what + ", by " + core_name(a.chip, a.core) + " at " + FormatTime(a.when) + " in " +
           (a.where.empty() ? std::string("the kernel body") : a.where);
  };
  return "race on " + place + ", " + buffer + ": " + describe(race.earlier) + "; then " +
         describe(race.later) +
         ". They touch the same bytes and no wait orders the first before the second (that it "
         "finished first in simulated time is timing, not order). " +
         race.fix;
}

}  // namespace tpusim::sim
