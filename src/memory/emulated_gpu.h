// What the emulated GPU (emulated_gpu.cc, test library only) tells its
// emulated IPC: the memfd behind an emulated device pointer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cumpi::memory {

struct EmulatedExport {
  int fd = -1;                   // the allocation's memfd, in this process
  std::size_t mapped_bytes = 0;  // its whole mapping, in pages
  std::uintptr_t offset = 0;     // of the pointer from the allocation's first byte
};

// False when `pointer` is not in an emulated allocation.
bool find_emulated_export(const void* pointer, EmulatedExport* out);

}  // namespace cumpi::memory
