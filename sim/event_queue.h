#pragma once

// The model's calendar. DMA chunks, signals and arrivals are callbacks scheduled at the
// time their work completes; one SystemC method wakes for the earliest of them. This keeps
// SystemC in charge of time while costing one kernel activation per batch of due work,
// not one process per transfer.
//
// The hot path (several events per DMA chunk) schedules a plain function with a context
// pointer and two integers, stored in the calendar itself: no allocation per event. A
// std::function may be scheduled too, for rare events; it is kept in a reusable slot.
// Events are grouped by due time, and a heap orders the groups.

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/base_names.h"
#include "sim/host_watch.h"

namespace tpusim::sim {

class EventQueue {
 public:
  using Callback = std::function<void()>;
  using Handler = void (*)(void* context, uint64_t a, uint64_t b);

  // Must be constructed inside a fresh SystemC context, before sc_start.
  EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue();

  static Picoseconds Now();

  // Runs `handler(context, a, b)` at absolute time `when` (>= Now()). Events due at the
  // same time run in the order they were scheduled, so runs are deterministic.
  void At(Picoseconds when, Handler handler, void* context, uint64_t a = 0, uint64_t b = 0) {
    AtFrom(Now(), when, handler, context, a, b);
  }
  // The same, for a caller that knows the time is `now` (Now() is a call into SystemC): a
  // DMA chunk's booking schedules two or three events at once.
  void AtFrom(Picoseconds now, Picoseconds when, Handler handler, void* context, uint64_t a = 0,
              uint64_t b = 0) {
    // Most events join a bucket that exists (a symmetric collective's chips all book at the
    // same instants): inline, that is a lookup and an append. Such a bucket is on the heap,
    // so the event is not the earliest and the kernel needs no new notification.
    const uint32_t recent = recent_[RecentSlot(when)];
    if (when >= now && recent < buckets_.size() && buckets_[recent].when == when) {
      buckets_[recent].items.push_back(Item{handler, context, a, b});
      return;
    }
    AtNewTime(now, when, handler, context, a, b);
  }
  // The same for any callable.
  void At(Picoseconds when, Callback callback);

  // Polls `watch` for every event it runs; when it expires, runs `on_expired(context)`
  // (which fails the run) and leaves the rest of the calendar unrun.
  void Watch(HostWatch* watch, void (*on_expired)(void* context), void* context) {
    watch_ = watch;
    on_expired_ = on_expired;
    expired_context_ = context;
  }

  // Lets the events of `handler` say what to prefetch before they run: `far(context, a, b)`
  // a few events ahead, for what it can reach without a load (the object `a` names), and
  // `near(context, a, b)` nearer, when that object has arrived and can be read for what it
  // points to. One handler may have hooks: the DMA chunk events, nearly all of a large
  // slice's events. Any other event's `a`, except a callback's, gets two lines
  // prefetched.
  void SetPrefetch(Handler handler, Handler far, Handler near) {
    prefetch_handler_ = handler;
    prefetch_far_ = far;
    prefetch_near_ = near;
  }

  uint64_t callbacks_run() const { return callbacks_run_; }
  bool empty() const { return heap_.empty(); }

 private:
  // Events due at one time, in the order they were scheduled. Symmetric collectives put
  // many events on the same few timestamps, so the heap orders buckets, not events.
  struct Item {
    Handler handler;
    void* context;
    uint64_t a;
    uint64_t b;
  };
  struct Bucket {
    Picoseconds when = kNoTime;
    std::vector<Item> items;
  };
  // Buckets of equal time run in the order they were made, so together they keep the
  // scheduling order.
  struct Due {
    Picoseconds when;
    uint64_t sequence;
    uint32_t bucket;
  };
  static constexpr Picoseconds kNoTime = ~Picoseconds{0};
  static constexpr size_t kRecentBuckets = 256;
  // How far ahead in its bucket the calendar prefetches an event's object (`a`, or the far
  // hook), and how far ahead it runs the near hook, which reads that object. A symmetric
  // collective on 4096 chips puts 8192 events in a bucket, each a few misses: with the
  // object two events ahead and nothing nearer, its semaphore and ports still missed
  // (docs/performance-large-slices.md, "Events per second on a large slice").
  static constexpr size_t kObjectAhead = 8;
  static constexpr size_t kHookAhead = 4;
  static bool Before(const Due& x, const Due& y) {
    return x.when != y.when ? x.when < y.when : x.sequence < y.sequence;
  }
  static size_t RecentSlot(Picoseconds when) {
    return (when ^ (when >> 13) ^ (when >> 29)) % kRecentBuckets;
  }
  Bucket& BucketFor(Picoseconds when);
  // AtFrom when `when` has no bucket among the recent ones (or is past).
  void AtNewTime(Picoseconds now, Picoseconds when, Handler handler, void* context, uint64_t a,
                 uint64_t b);
  void Push(const Due& due);
  void Pop();
  static void RunCallback(void* queue, uint64_t slot, uint64_t);
  // Far ahead of `item`: its hook, or two lines of its object.
  // Inlined into RunDue, which calls it once per event.
  [[gnu::always_inline]] void PrefetchFar(const Item& item) const;
  void RunDue();

  std::vector<Due> heap_;  // a binary min-heap on (when, sequence)
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  // The newest bucket of each time seen lately, by a hash of the time; a miss only makes
  // another bucket of that time.
  uint32_t recent_[kRecentBuckets];
  std::vector<Callback> callbacks_;
  std::vector<uint32_t> free_callbacks_;
  uint64_t next_sequence_ = 0;
  uint64_t callbacks_run_ = 0;
  Handler prefetch_handler_ = nullptr;
  Handler prefetch_far_ = nullptr;
  Handler prefetch_near_ = nullptr;
  HostWatch* watch_ = nullptr;
  void (*on_expired_)(void*) = nullptr;
  void* expired_context_ = nullptr;
  struct Wakeup;
  Wakeup* wakeup_;  // the sc_event, kept out of this header so callers need no SystemC
};

}  // namespace tpusim::sim
