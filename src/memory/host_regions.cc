#include "memory/host_regions.h"

#include <link.h>
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace cumpi::memory {

ProcessRegions g_process_regions;
thread_local ThreadStack g_thread_stack __attribute__((tls_model("initial-exec")));

namespace {

// Field 47 of /proc/self/stat is start_brk, the first byte of the heap.
std::uintptr_t read_start_brk() {
  FILE* file = std::fopen("/proc/self/stat", "r");
  if (file == nullptr) {
    return UINTPTR_MAX;
  }
  char text[4096];
  const size_t length = std::fread(text, 1, sizeof(text) - 1, file);
  std::fclose(file);
  text[length] = '\0';
  // The command name (field 2) may contain spaces: count fields after its ')'.
  const char* cursor = std::strrchr(text, ')');
  if (cursor == nullptr) {
    return UINTPTR_MAX;
  }
  int field = 2;
  unsigned long long value = 0;
  while (*cursor != '\0' && field < 47) {
    if (*cursor == ' ') {
      ++field;
      if (field == 47) {
        value = std::strtoull(cursor + 1, nullptr, 10);
      }
    }
    ++cursor;
  }
  return field == 47 && value != 0 ? static_cast<std::uintptr_t>(value) : UINTPTR_MAX;
}

int record_main_image(dl_phdr_info* info, size_t, void* data) {
  auto* regions = static_cast<ProcessRegions*>(data);
  std::uintptr_t low = UINTPTR_MAX;
  std::uintptr_t high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type == PT_LOAD) {
      low = std::min<std::uintptr_t>(low, info->dlpi_addr + header.p_vaddr);
      high = std::max<std::uintptr_t>(high, info->dlpi_addr + header.p_vaddr + header.p_memsz);
    }
  }
  if (low < high) {
    regions->image_begin = low;
    regions->image_end = high;
  }
  return 1;  // the first object is the main executable
}

}  // namespace

void read_process_regions() {
  ProcessRegions regions;
  regions.heap_begin = read_start_brk();
  dl_iterate_phdr(record_main_image, &regions);
  g_process_regions = regions;
}

bool in_host_region(const void* pointer) {
  if (in_known_host_region(pointer)) {
    return true;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address >= g_process_regions.heap_begin && address < reinterpret_cast<std::uintptr_t>(sbrk(0))) {
    return true;
  }
  if (!g_thread_stack.known) {
    read_thread_stack();
    return address >= g_thread_stack.low && address < g_thread_stack.high;
  }
  return false;
}

void read_thread_stack() {
  pthread_attr_t attributes;
  ThreadStack stack;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    void* low = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attributes, &low, &size) == 0) {
      stack.low = reinterpret_cast<std::uintptr_t>(low);
      stack.high = stack.low + size;
    }
    pthread_attr_destroy(&attributes);
  }
  stack.known = true;
  g_thread_stack = stack;
}

}  // namespace cumpi::memory
