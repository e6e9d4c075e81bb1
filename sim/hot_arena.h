#pragma once

// Objects the simulator touches for every chunk or wake-up (port and link calendars, each
// chip's DMA dispatcher, the cores' threads of control), allocated next to each other rather
// than among the module objects, which SystemC makes large: on a 4096-chip slice this keeps
// the hot state of all chips within a few megabytes, where scattered it would miss the
// TLB on most accesses. Objects are destroyed in reverse order of creation with the arena.

#include <cstddef>
#include <memory_resource>
#include <new>
#include <utility>
#include <vector>

namespace tpusim::sim {

class HotArena {
 public:
  HotArena() = default;
  HotArena(const HotArena&) = delete;
  HotArena& operator=(const HotArena&) = delete;
  ~HotArena() {
    for (auto it = objects_.rbegin(); it != objects_.rend(); ++it)
      it->destroy(it->object);
  }

  template <typename T, typename... Args>
  T& Make(Args&&... args) {
    // On a cache line of its own start: what a chunk reads of a port lies in its first three
    // lines, which would be four if the object began mid-line.
    void* memory = memory_.allocate(sizeof(T), alignof(T) > kLine ? alignof(T) : kLine);
    T* object = new (memory) T(std::forward<Args>(args)...);
    objects_.push_back({object, [](void* o) { static_cast<T*>(o)->~T(); }});
    return *object;
  }
  // `count` objects side by side, each made from `args`, so that one is found by arithmetic
  // (a chip's semaphores by chip: SliceState::TakeChipSemaphores) rather than through a
  // vector of pointers, a further load on every lookup.
  template <typename T, typename... Args>
  T* MakeArray(size_t count, const Args&... args) {
    auto* array = static_cast<T*>(
        memory_.allocate(sizeof(T) * count, alignof(T) > kLine ? alignof(T) : kLine));
    objects_.reserve(objects_.size() + count);
    for (size_t i = 0; i < count; ++i) {
      new (array + i) T(args...);
      objects_.push_back({array + i, [](void* o) { static_cast<T*>(o)->~T(); }});
    }
    return array;
  }
  // Raw memory that lives as long as the arena, for what allocates as it grows (a chip's
  // semaphores). Released with the arena; deallocating gives nothing back.
  std::pmr::memory_resource* resource() { return &memory_; }

 private:
  static constexpr size_t kLine = 64;
  struct Object {
    void* object;
    void (*destroy)(void*);
  };
  std::pmr::monotonic_buffer_resource memory_;
  std::vector<Object> objects_;
};

}  // namespace tpusim::sim
