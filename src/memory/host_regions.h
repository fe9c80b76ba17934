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

// glibc's current program break, which sbrk(0) returns; read directly to
// save a call per classification. Weak: elsewhere sbrk(0) answers.
extern "C" void* __curbrk __attribute__((weak));  // NOLINT: glibc's name

inline std::uintptr_t heap_end() {
  return reinterpret_cast<std::uintptr_t>(&__curbrk != nullptr ? __curbrk : sbrk(0));
}

struct ThreadStack {
  std::uintptr_t low = 0;
  std::uintptr_t high = 0;
  bool known = false;
};

extern thread_local ThreadStack g_thread_stack __attribute__((tls_model("initial-exec")));

void read_process_regions();
void read_thread_stack();

inline bool in_host_region(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address >= g_process_regions.heap_begin && address < heap_end()) {
    return true;
  }
  if (!g_thread_stack.known) {
    read_thread_stack();
  }
  if (address >= g_thread_stack.low && address < g_thread_stack.high) {
    return true;
  }
  return address >= g_process_regions.image_begin && address < g_process_regions.image_end;
}

}  // namespace cumpi::memory
