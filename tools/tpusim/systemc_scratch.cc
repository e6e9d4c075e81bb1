// The CLI's array new/delete and memset: as the library's, except for SystemC's start-up
// scratch heap.
//
// Why: libsystemc's static initialiser builds sc_core::sc_temp_heap, a 3 MiB scratch heap for
// its bit-vector temporaries (an sc_byte_heap: `new char[0x300000]`, then
// `std::memset` of it to zeros). Zeroing 3 MiB of fresh memory makes the
// kernel allocate and clear every page of it: 768 page faults with 4 KiB pages, or two 2 MiB
// huge pages cleared, either way about 7% of a 16-chip run's CPU
// (docs/performance-start-up.md). tpusim never uses SystemC's data types, but the heap is built
// before main by a library we do not build.
//
// Here that one block comes from an anonymous mapping of its own, which the kernel hands out
// zeroed, and that one memset (libsystemc calls memset through its PLT, so the executable's
// definition below is the one it binds) is skipped: its bytes are already the zeros it would
// write. No page of the block is touched; if SystemC ever uses the heap, its pages fault in
// then, zero as promised. Every other memset goes to glibc's, every other array allocation
// to the allocator.
//
// Only the executable does this: the tests and the Python module keep the defaults (a plugin
// the CLI loads shares the executable's, which after start-up behave as the defaults). Not
// under the sanitizers, which bring their own allocator and intercept memset themselves.

#include <sys/mman.h>

#include <cstddef>
#include <new>

// glibc's memset, by its checking entry point: the same implementation, chosen for this CPU,
// under a name the compiler does not know as a builtin (a call to "memset" here would be a
// call to the definition below).
extern "C" void* GlibcMemsetChecked(void* dest, int value, std::size_t n,
                                    std::size_t dest_size) __asm__("__memset_chk");

namespace {

// The size SystemC 2.3 gives sc_temp_heap.
constexpr std::size_t kSystemcScratchBytes = 0x300000;

// True until this executable's own initialisers run; every shared library's have run by
// then, SystemC's included. Constant-initialised, so it holds before any of them.
bool libraries_initialising = true;
void* scratch = nullptr;

[[gnu::constructor]] void LibrariesInitialised() {
  libraries_initialising = false;
}

bool ReleaseScratch(void* block) {
  if (block == nullptr || block != scratch) return false;
  munmap(block, kSystemcScratchBytes);
  scratch = nullptr;
  return true;
}

}  // namespace

void* operator new[](std::size_t size) {
  if (size == kSystemcScratchBytes && libraries_initialising && scratch == nullptr) {
    void* block = mmap(nullptr, kSystemcScratchBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block != MAP_FAILED) return scratch = block;
  }
  return ::operator new(size);
}

void operator delete[](void* block) noexcept {
  if (!ReleaseScratch(block)) ::operator delete(block);
}

void operator delete[](void* block, std::size_t size) noexcept {
  if (!ReleaseScratch(block)) ::operator delete(block, size);
}

extern "C" void* memset(void* dest, int value, std::size_t n) {
  // The scratch block's one zeroing, while the libraries initialise: a fresh anonymous
  // mapping is zero already.
  if (dest == scratch && value == 0 && n == kSystemcScratchBytes && libraries_initialising) {
    return dest;
  }
  return GlibcMemsetChecked(dest, value, n, n);
}
