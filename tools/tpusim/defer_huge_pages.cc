// The tpusim executable starts with transparent huge pages off (tools/tpusim/huge_pages.h says
// why); the CLI turns them back on once it has loaded a slice large enough to gain from them.
//
// Off before anything allocates: an executable's .preinit_array runs before every shared
// library's initialisers, and jemalloc (linked into the executable) starts at the first
// allocation, which one of those makes. PR_SET_THP_DISABLE is checked at each page fault, so
// jemalloc's advice on its ranges stands and takes effect once the flag is cleared.

#include <sys/prctl.h>

#include "tools/tpusim/huge_pages.h"

namespace {

void DeferHugePages(int /*argc*/, char** /*argv*/, char** /*envp*/) {
  tpusim::cli::huge_pages_deferred = prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0;
}

[[gnu::used,
  gnu::section(".preinit_array")]] void (*const defer_huge_pages)(int, char**,
                                                                  char**) = &DeferHugePages;

}  // namespace
