// Where a buffer lives. Host buffers must cost almost nothing: the region
// check answers for heap, stack and static buffers without the driver; the
// driver is asked only for other addresses, and only once it is loaded.
#pragma once

#include <cstdint>

#include "memory/datatype_layout.h"
#include "memory/device_memory.h"
#include "memory/host_regions.h"
#include "runtime/mpi_api.h"

namespace cumpi::memory {

// At MPI_Init.
void start_classifier();
PointerInfo query_device_memory(const void* pointer);

// The device memory's answer to on_device(), out of line: the host-region check
// stays a few instructions with no call and no saved registers.
bool memory_says_device(const void* pointer) __attribute__((noinline));

// Host memory by construction, decided without a call: the first page
// (Open MPI's MPI_IN_PLACE, MPI_STATUS_IGNORE), the last address (MPICH's
// MPI_IN_PLACE), heap, stack, image. False is "look closer". Address 0 is
// not known: it is NULL, but also MPI_BOTTOM, whose data lie where the
// datatype's absolute displacements say.
inline bool known_host(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  return (address - 1) < 4095 || address == UINTPTR_MAX || in_known_host_region(pointer);
}

// Full answer, with the owning allocation for device memory.
inline PointerInfo classify(const void* pointer) {
  if (known_host(pointer) || in_host_region(pointer)) {
    return PointerInfo{};
  }
  return query_device_memory(pointer);
}

// True when `pointer` is device memory that MPI cannot touch.
inline bool on_device(const void* pointer) {
  return __builtin_expect(!known_host(pointer), 0) && memory_says_device(pointer);
}

// The answer of locate() beyond the pointer's own region.
PointerInfo locate_slow(const void* pointer, int count, MPI_Datatype type) __attribute__((noinline));

// Where the bytes of `count` elements of `type` at `pointer` live: the
// owner of the first byte the call touches when that is device memory (the
// pointer may lie outside its data: MPI_BOTTOM with absolute displacements,
// a type whose data start away from its origin), else the pointer's own
// allocation when that is device memory, else host. An intercepted call asks
// once per buffer and hands the answer down to the engine (DESIGN §2, rule 3):
// each answer for a device pointer is a driver call.
inline PointerInfo locate(const void* pointer, int count, MPI_Datatype type) {
  if (__builtin_expect(known_host(pointer), 1)) {
    return PointerInfo{};
  }
  return locate_slow(pointer, count, type);
}

// The same for a buffer whose span the engine computed already (collectives'
// geometries, packing).
PointerInfo locate_span(const void* pointer, ByteSpan span);

inline bool is_device(const PointerInfo& info) { return info.kind == MemoryKind::device; }

}  // namespace cumpi::memory
