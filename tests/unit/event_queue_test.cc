// Layer 1: the model's calendar runs every event at its time, and events due at the same
// time in the order they were scheduled, however they are grouped inside. Same inputs give
// the same timing and trace only if this holds.

#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <systemc>
#include <tuple>
#include <vector>

#include "sim/systemc_context.h"

namespace tpusim::sim {
namespace {

struct Ran {
  Picoseconds due;  // when it was scheduled for (after clamping to now)
  uint64_t order;   // the order it was scheduled in, over the whole run
  Picoseconds ran;  // when it ran
};

struct Harness {
  EventQueue* queue = nullptr;
  std::mt19937_64 random{7};
  uint64_t scheduled = 0;
  uint64_t budget = 0;  // events that may still schedule more
  std::vector<Ran> log;
  std::vector<Picoseconds> times;  // a small pool, so many events share a time

  void Schedule(Picoseconds when, bool generic) {
    const Picoseconds due = std::max(when, EventQueue::Now());
    const uint64_t order = scheduled++;
    if (generic) {
      queue->At(when, [this, due, order] { Fire(due, order); });
    } else {
      queue->At(
          when, [](void* self, uint64_t d, uint64_t o) { static_cast<Harness*>(self)->Fire(d, o); },
          this, due, order);
    }
  }
  void Fire(Picoseconds due, uint64_t order) {
    log.push_back({due, order, EventQueue::Now()});
    // Re-entrant scheduling: now (joins the running group), soon, or later.
    for (int i = 0; i < 2 && budget > 0; ++i, --budget) {
      const Picoseconds now = EventQueue::Now();
      const int kind = static_cast<int>(random() % 4);
      const Picoseconds when = kind == 0   ? now
                               : kind == 1 ? now + times[random() % times.size()]
                                           : now + (random() % 4) * 1000;
      Schedule(when, random() % 5 == 0);
    }
  }
};

void ExpectRunsInTimeThenSchedulingOrder(size_t distinct_times) {
  SystemCContext context;
  EventQueue queue;
  Harness h;
  h.queue = &queue;
  h.budget = 20000;
  for (size_t i = 0; i < distinct_times; ++i)
    h.times.push_back(1 + h.random() % 1'000'000);
  for (int i = 0; i < 3000; ++i)
    h.Schedule(h.times[h.random() % h.times.size()], i % 7 == 0);
  sc_core::sc_start();

  ASSERT_EQ(h.log.size(), h.scheduled);
  EXPECT_EQ(queue.callbacks_run(), h.scheduled);
  EXPECT_TRUE(queue.empty());
  for (size_t i = 0; i < h.log.size(); ++i) {
    EXPECT_EQ(h.log[i].ran, h.log[i].due) << "event " << h.log[i].order;
    if (i > 0) {
      const auto before = std::make_tuple(h.log[i - 1].due, h.log[i - 1].order);
      const auto after = std::make_tuple(h.log[i].due, h.log[i].order);
      ASSERT_LT(before, after) << "event " << h.log[i].order << " ran out of order";
    }
  }
}

TEST(EventQueue, FewDistinctTimesRunInTimeThenSchedulingOrder) {
  ExpectRunsInTimeThenSchedulingOrder(5);
}

TEST(EventQueue, ManyDistinctTimesRunInTimeThenSchedulingOrder) {
  // More times than the queue remembers groups for, so groups of one time get split.
  ExpectRunsInTimeThenSchedulingOrder(5000);
}

// The prefetch hooks (EventQueue::SetPrefetch) are asked about events of their handler only,
// each hook at most once per event and before it runs, the far one first; they change neither
// what runs nor the order.
struct Hooked {
  std::vector<uint64_t> ran;      // `a` of each event of either handler, as it runs
  std::vector<uint64_t> asked;    // `a` of each event the hook was asked about
  std::vector<bool> asked_early;  // whether that event had not run yet
  std::vector<bool> ran_already;  // by `a`
  std::vector<bool> far_asked;    // by `a`: the far hook has seen it
  int far_twice = 0;
  int far_late = 0;
  int near_before_far = 0;
};

void RunHooked(void* self, uint64_t a, uint64_t) {
  auto& h = *static_cast<Hooked*>(self);
  h.ran.push_back(a);
  h.ran_already[a] = true;
}
void RunOther(void* self, uint64_t a, uint64_t) {
  static_cast<Hooked*>(self)->ran.push_back(a);
}
void PrefetchFar(void* self, uint64_t a, uint64_t) {
  auto& h = *static_cast<Hooked*>(self);
  if (h.far_asked[a]) ++h.far_twice;
  if (h.ran_already[a]) ++h.far_late;
  h.far_asked[a] = true;
}
void Prefetch(void* self, uint64_t a, uint64_t) {
  auto& h = *static_cast<Hooked*>(self);
  if (!h.far_asked[a]) ++h.near_before_far;
  h.asked.push_back(a);
  h.asked_early.push_back(!h.ran_already[a]);
}

TEST(EventQueue, PrefetchHookSeesOnlyItsEventsBeforeTheyRun) {
  SystemCContext context;
  EventQueue queue;
  queue.SetPrefetch(&RunHooked, &PrefetchFar, &Prefetch);
  Hooked h;
  constexpr uint64_t kEvents = 200;
  h.ran_already.assign(kEvents, false);
  h.far_asked.assign(kEvents, false);
  // Most events in two large buckets, every third of the other handler; a few alone.
  for (uint64_t a = 0; a < kEvents; ++a) {
    const Picoseconds when = a < 190 ? 1000 * (1 + a % 2) : 5000 + a;
    queue.At(when, a % 3 == 0 ? &RunOther : &RunHooked, &h, a);
  }
  sc_core::sc_start();

  ASSERT_EQ(h.ran.size(), kEvents);
  // In time order, then in the order scheduled: the evens' bucket, the odds', the rest.
  std::vector<uint64_t> expected;
  for (uint64_t parity : {0, 1})
    for (uint64_t a = parity; a < 190; a += 2)
      expected.push_back(a);
  for (uint64_t a = 190; a < kEvents; ++a)
    expected.push_back(a);
  EXPECT_EQ(h.ran, expected);
  ASSERT_FALSE(h.asked.empty());
  std::vector<int> times_asked(kEvents, 0);
  for (size_t i = 0; i < h.asked.size(); ++i) {
    EXPECT_NE(h.asked[i] % 3, 0u) << "the hook was asked about another handler's event";
    EXPECT_TRUE(h.asked_early[i]) << "event " << h.asked[i] << " had already run";
    ++times_asked[h.asked[i]];
  }
  for (uint64_t a = 0; a < kEvents; ++a)
    EXPECT_LE(times_asked[a], 1) << "event " << a;
  // Within a bucket of 95 events, all but the first few are looked at ahead.
  EXPECT_GT(h.asked.size(), 100u);
  EXPECT_EQ(h.far_twice, 0);
  EXPECT_EQ(h.far_late, 0);
  EXPECT_EQ(h.near_before_far, 0);
  for (uint64_t a = 0; a < kEvents; a += 3)
    EXPECT_FALSE(h.far_asked[a]) << "another handler's event " << a;
}

}  // namespace
}  // namespace tpusim::sim
