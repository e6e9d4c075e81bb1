#include "tools/tpusim/huge_pages.h"

#include <sys/prctl.h>

namespace tpusim::cli {

bool huge_pages_deferred = false;

void UseHugePagesFor(uint64_t devices) {
  if (!huge_pages_deferred || devices < kHugePageDevices) return;
  // The flag is checked when a page faults in: the heap's ranges jemalloc advised for huge
  // pages get them from here on.
  if (prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0) == 0) huge_pages_deferred = false;
}

}  // namespace tpusim::cli
