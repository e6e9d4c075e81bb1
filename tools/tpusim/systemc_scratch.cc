// The CLI's array new/delete: as the library's, except for SystemC's start-up scratch heap.
//
// Why: libsystemc's static initialiser builds sc_core::sc_temp_heap, a 3 MiB scratch heap for
// its bit-vector temporaries (an sc_byte_heap: new char[0x300000], then a memset).
// From the allocator, that memset faults in 768 fresh 4 KiB pages: about half the page faults
// of a 16-chip run, and about 0.4 ms of its CPU (docs/performance.md, "Start-up cost"). tpusim
// never uses SystemC's data types, but the heap is built before main by a library we do not
// build. Here that one block comes from a mapping the kernel may back with two transparent
// huge pages (madvise(MADV_HUGEPAGE), which a system in THP's "madvise" mode requires): two
// faults instead of 768. Its bytes are the same zeros. Where huge pages are off, the block
// faults in page by page as before. (A MAP_POPULATE mapping saved the traps but not the page
// allocations, and measured no faster.)
//
// Only the executable replaces operator new[]: the tests and the Python module keep the
// default (a plugin the CLI loads shares the executable's, which after start-up is the
// default's behaviour). Not under the sanitizers, which bring their own allocator.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace {

// The size SystemC 2.3 gives sc_temp_heap.
constexpr std::size_t kSystemcScratchBytes = 0x300000;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// The block rounded up to whole huge pages.
constexpr std::size_t kScratchMapping = (kSystemcScratchBytes + kHugePage - 1) & ~(kHugePage - 1);

// True until this executable's own initialisers run; every shared library's have run by
// then, SystemC's included. Constant-initialised, so it holds before any of them.
bool libraries_initialising = true;
void* scratch = nullptr;

[[gnu::constructor]] void LibrariesInitialised() {
  libraries_initialising = false;
}

// kScratchMapping bytes aligned to a huge page, or nullptr.
void* MapScratch() {
  const std::size_t reserved = kScratchMapping + kHugePage;
  void* region =
      mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(region);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~std::uintptr_t{kHugePage - 1};
  // Give back the unaligned head and the tail.
  if (aligned > start) munmap(region, aligned - start);
  const std::uintptr_t end = aligned + kScratchMapping;
  if (start + reserved > end) munmap(reinterpret_cast<void*>(end), start + reserved - end);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, kScratchMapping, MADV_HUGEPAGE);  // advice: failing it costs only speed
  return block;
}

bool ReleaseScratch(void* block) {
  if (block == nullptr || block != scratch) return false;
  munmap(block, kScratchMapping);
  scratch = nullptr;
  return true;
}

}  // namespace

void* operator new[](std::size_t size) {
  if (size == kSystemcScratchBytes && libraries_initialising && scratch == nullptr) {
    if (void* block = MapScratch()) return scratch = block;
  }
  return ::operator new(size);
}

void operator delete[](void* block) noexcept {
  if (!ReleaseScratch(block)) ::operator delete(block);
}

void operator delete[](void* block, std::size_t size) noexcept {
  if (!ReleaseScratch(block)) ::operator delete(block, size);
}
