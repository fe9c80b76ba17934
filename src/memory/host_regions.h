// Address ranges that are host memory by construction: the brk heap, the
// calling thread's stack and the main executable's image. Device memory is
// never mapped there (the driver maps it with mmap in ranges of its own), so
// a pointer inside them needs no driver query. This keeps host-buffer calls
// at a few nanoseconds even in processes that use CUDA.
#pragma once

#include <unistd.h>

#include <cstdint>

namespace cumpi::memory {

struct ProcessRegions {
  std::uintptr_t heap_begin = UINTPTR_MAX;  // start_brk; the end is read live with sbrk(0)
  std::uintptr_t image_begin = 0;
  std::uintptr_t image_end = 0;
};

extern ProcessRegions g_process_regions;

// glibc's current program break, which sbrk(0) returns; read directly, so
// that the check needs no call. Weak: without glibc, sbrk(0) answers (on the
// slow path).
extern "C" void* __curbrk __attribute__((weak));  // NOLINT: glibc's name

struct ThreadStack {
  std::uintptr_t low = 0;
  std::uintptr_t high = 0;
  bool known = false;
};

extern thread_local ThreadStack g_thread_stack __attribute__((tls_model("initial-exec")));

void read_process_regions();
void read_thread_stack();

// Call-free, a handful of instructions: true means host memory for certain;
// false may still be host memory (this thread's stack not read yet, a C
// library without __curbrk): in_host_region() then knows.
inline bool in_known_host_region(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address >= g_process_regions.heap_begin && &__curbrk != nullptr &&
      address < reinterpret_cast<std::uintptr_t>(__curbrk)) {
    return true;
  }
  const ThreadStack& stack = g_thread_stack;
  if (address >= stack.low && address < stack.high) {
    return true;
  }
  return address >= g_process_regions.image_begin && address < g_process_regions.image_end;
}

// The full answer: reads this thread's stack bounds and the break if needed.
bool in_host_region(const void* pointer);

}  // namespace cumpi::memory
