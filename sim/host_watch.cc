#include "sim/host_watch.h"

#include "base/text.h"

namespace tpusim::sim {

HostWatch::HostWatch(const base::RunConfig& config) : wall_limit_s_(config.wall_limit_s) {
  if (config.wall_limit_s > 0) {
    has_deadline_ = true;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(config.wall_limit_s));
  }
  if (config.interrupted) interrupted_ = &config.interrupted;
}

bool HostWatch::Check() {
  if (expired_) return true;
  if (interrupted_ && (*interrupted_)()) {
    expired_ = true;
    kind_ = ErrorKind::kInterrupted;
  } else if (has_deadline_ && std::chrono::steady_clock::now() >= deadline_) {
    expired_ = true;
    kind_ = ErrorKind::kTimeLimit;
  }
  return expired_;
}

std::string HostWatch::Limit() const {
  if (kind_ == ErrorKind::kInterrupted) return "an interrupt from the caller (e.g. Ctrl-C)";
  std::string limit = "the host wall-clock limit of ";
  limit += base::NumberText(wall_limit_s_);
  limit += " s (wall_limit)";
  return limit;
}

}  // namespace tpusim::sim
