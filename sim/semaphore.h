#pragma once

// A semaphore of one chip: REGULAR and BARRIER ones count signals, DMA ones count bytes.
// Semaphores are made while kernels run (scratch, run_scoped), so they are plain objects
// owned by their chip, not modules. A change wakes the chip's threads of control that
// wait on it and can now go on (SliceState::AddToSemaphore).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base_names.h"
#include "traces/trace_sink.h"

namespace tpusim::sim {

class CoreThread;

// What last changed a semaphore, for deadlock and exit reports.
// A DMA's touch names it by its label, shared with the DMA, so remembering one copies no
// string; the report writes "DMA 'ag step 1' (sent)" only when it is asked for.
struct Touch {
  enum class Kind : uint8_t { kSignal, kDmaSent, kDmaLanded };
  Picoseconds when = 0;
  ChipId from = 0;
  Kind kind = Kind::kSignal;
  int64_t amount = 0;
  base::Label dma;  // the DMA's label, for kDmaSent and kDmaLanded
  // "signal", "DMA 'ag step 1'" or "DMA 'ag step 1' (sent)".
  std::string Describe() const;
};

// 128 bytes, two cache lines: a pod has over a hundred per device (a DMA kernel's send and
// receive semaphores by share, phase and parity), and at 184 bytes they took 26 KB of each
// device's memory (docs/performance-pod-memory.md).
class Semaphore {
 public:
  static constexpr size_t kRecentTouches = 3;

  // `name` is kept by the slice, at a stable address, for as long as the semaphore
  // (SliceState::SemaphoreName): only reports and traces read it.
  Semaphore(const std::string* name, SemaphoreKind kind)
      : name_(name), kind_(static_cast<uint8_t>(kind)) {}

  const std::string& name() const { return *name_; }
  SemaphoreKind kind() const { return static_cast<SemaphoreKind>(kind_); }
  int64_t value() const { return value_; }
  // How many touches it remembers (at most kRecentTouches), and the i-th newest (0: the
  // newest).
  size_t recent_count() const { return recent_count_; }
  Touch recent(size_t i) const {
    const size_t at = (recent_next_ + kRecentTouches - 1 - i) % kRecentTouches;
    return {recent_when_[at], recent_from_[at],
            static_cast<Touch::Kind>(recent_kinds_ >> (2 * at) & 3), recent_amount_[at],
            recent_dma_[at]};
  }
  traces::TrackId counter_track() const { return counter_track_; }
  void set_counter_track(traces::TrackId track) { counter_track_ = track; }

  // Raises the value; `touch` (may be null) is remembered for reports. False, changing
  // nothing, when the value would pass INT64_MAX.
  [[nodiscard]] bool Add(int64_t amount, const Touch* touch) {
    int64_t sum = 0;
    if (__builtin_add_overflow(value_, amount, &sum)) return false;
    value_ = sum;
    if (touch) {  // over the oldest; a chunk of the DMA that wrote it copies no label
      const size_t at = recent_next_;
      recent_when_[at] = touch->when;
      recent_amount_[at] = touch->amount;
      recent_dma_[at] = touch->dma;
      recent_from_[at] = touch->from;
      recent_kinds_ = static_cast<uint8_t>((recent_kinds_ & ~(3u << (2 * at))) |
                                           static_cast<unsigned>(touch->kind) << (2 * at));
      recent_next_ = static_cast<uint8_t>((at + 1) % kRecentTouches);
      if (recent_count_ < kRecentTouches) ++recent_count_;
    }
    return true;
  }
  // A wait that found enough: consumes `amount`.
  void Take(int64_t amount) { value_ -= amount; }

  // `thread` starts waiting for the value to reach `amount`.
  void AwaitAtLeast(int64_t amount, CoreThread* thread) {
    wake_at_ = std::min(wake_at_, amount);
    waiter_ = waiter_ ? Several() : thread;
  }
  // `thread` waits on it no more.
  void StopWaiting(const CoreThread* thread) {
    if (waiter_ == thread) {
      waiter_ = nullptr;
      wake_at_ = INT64_MAX;
    }
  }
  // The one thread of control that waits on it, which a change that may wake pokes straight
  // away; null when none does, or when several may (then the chip's threads are walked, in
  // their order, as they are poked: SliceState::AddToSemaphore).
  CoreThread* sole_waiter() const { return waiter_ == Several() ? nullptr : waiter_; }
  // Whether a change may wake a waiter: false while the value is below what every thread
  // that waits on this semaphore needs, so a chunk that lands before its waiter can go on
  // costs no look at the chip's threads (on a pod, each a cache miss).
  bool MayWake() const { return value_ >= wake_at_; }
  // What the threads still waiting on it need, at the least (INT64_MAX: none waits), found by
  // a walk of the chip's threads; `waiting` of them wait on it, `last` the last found.
  void set_waiters(int64_t amount, size_t waiting, CoreThread* last) {
    wake_at_ = amount;
    waiter_ = waiting == 0 ? nullptr : waiting == 1 ? last : Several();
  }

  // "last changed by signal from chip 1 (x=1) (+1 at 2.000 us)", for reports.
  std::string DescribeRecent(const DeviceGrid& grid) const;

 private:
  // waiter_ when more than one thread may wait on it. Never dereferenced.
  static CoreThread* Several() { return reinterpret_cast<CoreThread*>(alignof(CoreThread*)); }

  // What every chunk and wait reads, together in the first 48 bytes: a SemaphoreTable starts
  // its segments on a cache line and the size is a multiple of 64, so they share one line.
  int64_t value_ = 0;
  // No waiter needs less than this (AwaitAtLeast lowers it; StopWaiting, and
  // SliceState::AddToSemaphore when it looks at the chip's threads, set it anew).
  int64_t wake_at_ = INT64_MAX;
  traces::TrackId counter_track_ = 0;
  // The thread that waits on it (sole_waiter): a wake-up goes to it without reading the
  // chip's list of threads, two or three cold lines on a pod.
  CoreThread* waiter_ = nullptr;
  const std::string* name_;
  uint8_t kind_;  // a SemaphoreKind: a wait and a DMA's check read it with the value
  // Where the next touch goes, and how many there are.
  uint8_t recent_next_ = 0, recent_count_ = 0;
  // The last touches, a ring inside the semaphore: a vector of them was a heap block that
  // every chunk's touch reached through the semaphore, a second cache miss on a pod. Field
  // by field, as an array of Touch would pad each to 32 bytes (40 before); their kinds two
  // bits each, in one byte, so that waiter_ fits.
  uint8_t recent_kinds_ = 0;
  ChipId recent_from_[kRecentTouches] = {};
  Picoseconds recent_when_[kRecentTouches] = {};
  int64_t recent_amount_[kRecentTouches] = {};
  base::Label recent_dma_[kRecentTouches];
};
static_assert(sizeof(Semaphore) == 128, "a semaphore in two cache lines");
static_assert(Semaphore::kRecentTouches * 2 <= 8, "the touches' kinds in one byte");

}  // namespace tpusim::sim
