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
//
// dirty_decay_ms:-1 keeps the pages of freed memory for the heap's next allocations instead of
// handing them back to the kernel. By default jemalloc returns them over ten seconds, and on a
// large run that is its own cost twice over: an madvise call, then, when the heap grows into
// that memory again, a page fault and the kernel's clearing of the page, a whole 2 MiB at a
// time on huge pages (on the v5p pod's all-gather, 1.7 s of system time out of 20).
// lg_extent_max_active_fit:30 lets the heap carve small blocks out of a large freed region:
// by default it will not split a region more than 64 times larger than the block, maps fresh
// memory instead, and with the pages kept, a process that runs one slice after another (a
// benchmark's repetitions, bench's rows) grew with every run and faulted in new pages each
// time. docs/performance-pod-memory.md, "The allocator's returned pages", has the figures. The
// cost is that a process's resident set stays at its peak until it exits.

extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name is jemalloc's.
extern const char* malloc_conf;
const char* malloc_conf =
    "thp:always,metadata_thp:auto,dirty_decay_ms:-1,lg_extent_max_active_fit:30";
}
