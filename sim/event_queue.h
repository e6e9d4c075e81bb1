#pragma once

// The model's calendar. DMA chunks, signals and arrivals are callbacks scheduled at the
// time their work completes; one SystemC method wakes for the earliest of them. This keeps
// SystemC in charge of time while costing one kernel activation per batch of due work,
// not one process per transfer.

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/time.h"

namespace tpusim::sim {

class EventQueue {
 public:
  using Callback = std::function<void()>;

  // Must be constructed inside a fresh SystemC context, before sc_start.
  EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue();

  static Picoseconds Now();

  // Runs `callback` at absolute time `when` (>= Now()). Callbacks due at the same time run
  // in the order they were scheduled, so runs are deterministic.
  void At(Picoseconds when, Callback callback);

  uint64_t callbacks_run() const { return callbacks_run_; }
  bool empty() const { return pending_.empty(); }

 private:
  struct Item {
    Picoseconds when;
    uint64_t sequence;
    Callback callback;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.when != b.when ? a.when > b.when : a.sequence > b.sequence;
    }
  };

  void RunDue();

  std::priority_queue<Item, std::vector<Item>, Later> pending_;
  uint64_t next_sequence_ = 0;
  uint64_t callbacks_run_ = 0;
  struct Wakeup;
  Wakeup* wakeup_;  // the sc_event, kept out of this header so callers need no SystemC
};

}  // namespace tpusim::sim
