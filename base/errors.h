#pragma once

// Every user-facing failure is a tpusim::Error with a kind, so the CLI and the tests can
// tell a deadlock from a capacity overflow without parsing text. Messages are whole
// sentences in the kernel author's terms that say how to fix the problem.

#include <stdexcept>
#include <string>

namespace tpusim {

enum class ErrorKind {
  kDeadlock,
  kSemaphoreNotZero,
  kSemaphoreMisuse,
  kRace,
  kKernelMisuse,
  kOutOfBounds,
  kCapacity,
  kTimeLimit,
  kInvalidArgument,
  kInterrupted,  // the caller asked the run to stop (RunConfig::interrupted)
};
// The last kind, so code that lists every kind (the Python module's exceptions) sees a new one.
inline constexpr ErrorKind kLastErrorKind = ErrorKind::kInterrupted;

const char* ErrorKindName(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace tpusim
