#include "base/errors.h"

namespace tpusim {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kDeadlock:
      return "deadlock";
    case ErrorKind::kSemaphoreNotZero:
      return "semaphore not zero at exit";
    case ErrorKind::kSemaphoreMisuse:
      return "semaphore misuse";
    case ErrorKind::kRace:
      return "race";
    case ErrorKind::kKernelMisuse:
      return "kernel misuse";
    case ErrorKind::kOutOfBounds:
      return "out of bounds";
    case ErrorKind::kCapacity:
      return "over capacity";
    case ErrorKind::kTimeLimit:
      return "time limit";
    case ErrorKind::kInvalidArgument:
      return "invalid argument";
    case ErrorKind::kInterrupted:
      return "interrupted";
  }
  return "error";
}

}  // namespace tpusim
