#include "sim/event_queue.h"

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

namespace tpusim::sim {

struct EventQueue::Wakeup {
  sc_core::sc_event event{"tpusim_event_queue"};
};

EventQueue::EventQueue() : wakeup_(new Wakeup) {
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
  return sc_core::sc_time_stamp().value();
}

void EventQueue::At(Picoseconds when, Callback callback) {
  const Picoseconds now = Now();
  if (when < now) when = now;
  const bool earliest = pending_.empty() || when < pending_.top().when;
  pending_.push(Item{when, next_sequence_++, std::move(callback)});
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

void EventQueue::RunDue() {
  const Picoseconds now = Now();
  while (!pending_.empty() && pending_.top().when <= now) {
    // Moving out of the heap's top needs a const_cast; the item is popped right after.
    Callback callback = std::move(const_cast<Item&>(pending_.top()).callback);
    pending_.pop();
    ++callbacks_run_;
    callback();
  }
  if (!pending_.empty()) {
    wakeup_->event.notify(sc_core::sc_time::from_value(pending_.top().when - now));
  }
}

}  // namespace tpusim::sim
