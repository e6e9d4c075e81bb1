// jemalloc's options for the executables that link it (cmake/FastMalloc.cmake): jemalloc reads
// this symbol when it starts, before the MALLOC_CONF environment variable, which still
// overrides it.
//
// thp:always asks the kernel for 2 MiB pages for jemalloc's heap (madvise(MADV_HUGEPAGE)),
// where the usual system setting ("madvise") would give it 4 KiB ones. On a large slice the
// state every chunk touches (ports, transfers, semaphores) is spread over hundreds of MB:
// with 4 KiB pages most of those accesses also missed the TLB, whose entries cover a few MB,
// and a page walk cannot be hidden by a prefetch as a cache miss can. With 2 MiB pages the
// v4-16x16x16 all-gather spends a fifth less user time (the kernel's clearing of the huge
// pages, system time, takes back part of it) (docs/performance-large-slices.md, "Events per
// second on a large slice: huge pages and a deeper look-ahead"). On a small slice that
// clearing costs more than the pages save, so the tpusim executable keeps them off until it
// knows the slice is large (tools/tpusim/huge_pages.h).

extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name is jemalloc's.
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:auto";
}
