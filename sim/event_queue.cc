#include "sim/event_queue.h"

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <iterator>
#include <systemc>

namespace tpusim::sim {

struct EventQueue::Wakeup {
  sc_core::sc_event event{"tpusim_event_queue"};
};

EventQueue::EventQueue() : wakeup_(new Wakeup) {
  std::fill(std::begin(recent_), std::end(recent_), UINT32_MAX);
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&wakeup_->event);
  options.dont_initialize();
  sc_core::sc_spawn([this] { RunDue(); }, "tpusim_event_queue_method", &options);
}

EventQueue::~EventQueue() {
  delete wakeup_;
}

Picoseconds EventQueue::Now() {
  // sc_time_stamp() is a call into SystemC's library for what its simcontext keeps inline.
  return sc_core::sc_get_curr_simcontext()->time_stamp().value();
}

void EventQueue::Push(const Due& due) {
  // Sift up with a hole instead of swaps.
  size_t hole = heap_.size();
  heap_.push_back(due);
  while (hole > 0) {
    const size_t parent = (hole - 1) / 2;
    if (!Before(due, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = due;
}

void EventQueue::Pop() {
  const Due last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  size_t hole = 0;
  for (;;) {
    size_t child = 2 * hole + 1;
    if (child >= n) break;
    if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
    if (!Before(heap_[child], last)) break;
    heap_[hole] = heap_[child];
    hole = child;
  }
  heap_[hole] = last;
}

EventQueue::Bucket& EventQueue::BucketFor(Picoseconds when) {
  uint32_t& recent = recent_[RecentSlot(when)];
  if (recent < buckets_.size() && buckets_[recent].when == when) return buckets_[recent];
  if (free_buckets_.empty()) {
    recent = static_cast<uint32_t>(buckets_.size());
    buckets_.emplace_back();
  } else {
    recent = free_buckets_.back();
    free_buckets_.pop_back();
  }
  Bucket& bucket = buckets_[recent];
  bucket.when = when;
  Push(Due{when, next_sequence_++, recent});
  return bucket;
}

void EventQueue::AtNewTime(Picoseconds now, Picoseconds when, Handler handler, void* context,
                           uint64_t a, uint64_t b) {
  if (when < now) when = now;
  const bool earliest = heap_.empty() || when < heap_.front().when;
  BucketFor(when).items.push_back(Item{handler, context, a, b});
  // A pending later notification is overridden by an earlier one, so only the earliest
  // item needs to reach the kernel.
  if (earliest) {
    if (when == now) {
      wakeup_->event.notify(sc_core::SC_ZERO_TIME);
    } else {
      wakeup_->event.notify(sc_core::sc_time::from_value(when - now));
    }
  }
}

void EventQueue::At(Picoseconds when, Callback callback) {
  uint32_t slot;
  if (free_callbacks_.empty()) {
    slot = static_cast<uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(callback));
  } else {
    slot = free_callbacks_.back();
    free_callbacks_.pop_back();
    callbacks_[slot] = std::move(callback);
  }
  At(when, &EventQueue::RunCallback, this, slot);
}

void EventQueue::RunCallback(void* queue, uint64_t slot, uint64_t) {
  auto* self = static_cast<EventQueue*>(queue);
  // Moved out first: the callback may schedule others, which may reuse or grow the slots.
  Callback callback = std::move(self->callbacks_[slot]);
  self->callbacks_[slot] = nullptr;
  self->free_callbacks_.push_back(static_cast<uint32_t>(slot));
  callback();
}

inline void EventQueue::PrefetchFar(const Item& item) const {
  if (item.handler == prefetch_handler_ && prefetch_handler_ != nullptr) {
    prefetch_far_(item.context, item.a, item.b);
  } else if (item.handler != &EventQueue::RunCallback) {
    const auto object = static_cast<uintptr_t>(item.a);
    __builtin_prefetch(reinterpret_cast<const void*>(object));
    __builtin_prefetch(reinterpret_cast<const void*>(object + 64));
  }
}

void EventQueue::RunDue() {
  const Picoseconds now = Now();
  while (!heap_.empty() && heap_.front().when <= now) {
    const uint32_t index = heap_.front().bucket;
    // The first events of the bucket have no events before them to be looked ahead from.
    for (size_t i = 0; i < kObjectAhead && i < buckets_[index].items.size(); ++i)
      PrefetchFar(buckets_[index].items[i]);
    // Items scheduled for now while the bucket runs join its end and run in this loop.
    for (size_t i = 0; i < buckets_[index].items.size(); ++i) {
      if (watch_ && watch_->Expired()) [[unlikely]] {
        on_expired_(expired_context_);
        return;
      }
      const std::vector<Item>& items = buckets_[index].items;
      const Item item = items[i];
      // The object of an event further on (a DMA's Transfer, say) is likely out of the cache
      // on a large slice: ask for it now, so that its miss overlaps this event's work; then,
      // nearer, let its hook ask for what the object points to (semaphores, ports). A
      // prefetch never faults, so an `a` that is not an address costs nothing; the offset is
      // taken on the integer, as pointer arithmetic on a null `a` would be undefined.
      if (i + kObjectAhead < items.size()) PrefetchFar(items[i + kObjectAhead]);
      if (i + kHookAhead < items.size() && items[i + kHookAhead].handler == prefetch_handler_ &&
          prefetch_handler_ != nullptr) {
        const Item& near = items[i + kHookAhead];
        prefetch_near_(near.context, near.a, near.b);
      }
      ++callbacks_run_;
      item.handler(item.context, item.a, item.b);
    }
    Pop();
    buckets_[index].when = kNoTime;
    buckets_[index].items.clear();
    free_buckets_.push_back(index);
  }
  if (!heap_.empty()) {
    wakeup_->event.notify(sc_core::sc_time::from_value(heap_.front().when - now));
  }
}

}  // namespace tpusim::sim
