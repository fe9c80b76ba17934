// Device allocations this process has seen, so that a pointer into one the
// driver no longer backs (freed with cudaFree, or cumpi_emu_free) is told
// apart from host memory: MPI would fault on it. A pointer counts as freed
// device memory when it lies in an allocation cumpi saw as device memory,
// the device memory no longer knows it, and the CPU cannot read it (so host
// memory that the system mapped at a reused address stays host memory).
// What cannot be told: a freed allocation cumpi never saw (no MPI call named
// it while it lived), and one whose addresses were mapped again as host
// memory, which MPI then reads as host memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/device_memory.h"

namespace cumpi::memory {

// After a query found device memory [base, base + size).
void saw_device_allocation(std::uintptr_t base, std::size_t size);
// After the device memory said it does not know `pointer`.
bool in_freed_device_allocation(const void* pointer);

// The answer for a pointer the device memory does not know: freed device
// memory, else host memory.
inline PointerInfo freed_or_host(const void* pointer) {
  PointerInfo info;
  if (in_freed_device_allocation(pointer)) {
    info.kind = MemoryKind::device;
    info.freed = true;
  }
  return info;
}

}  // namespace cumpi::memory
