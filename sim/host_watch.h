#pragma once

// The limits a run has on the host's side, polled while it runs: the wall clock
// (RunConfig::wall_limit_s) and the caller's interrupt (RunConfig::interrupted, e.g. a
// notebook's Ctrl-C). Simulated time alone cannot end a run whose steps cost no simulated
// time, or one its user gave up on. The calendar and the cores poll; only every
// kPollEvery-th poll reads the clock, so a poll costs a decrement.

#include <chrono>
#include <string>

#include "base/errors.h"
#include "base/run_config.h"

namespace tpusim::sim {

class HostWatch {
 public:
  explicit HostWatch(const base::RunConfig& config);

  // Whether a limit has been reached. Once it has, every later poll says so.
  bool Expired() {
    if (--countdown_ > 0) return expired_;
    countdown_ = kPollEvery;
    return Check();
  }
  // kTimeLimit for the wall clock, kInterrupted for the caller's interrupt.
  ErrorKind kind() const { return kind_; }
  // "the host wall-clock limit of 300 s (wall_limit)": what ended the run, for its report.
  std::string Limit() const;

 private:
  static constexpr int kPollEvery = 4096;
  bool Check();

  std::chrono::steady_clock::time_point deadline_;
  bool has_deadline_ = false;
  double wall_limit_s_ = 0;
  const std::function<bool()>* interrupted_ = nullptr;
  int countdown_ = kPollEvery;
  bool expired_ = false;
  ErrorKind kind_ = ErrorKind::kTimeLimit;
};

}  // namespace tpusim::sim
