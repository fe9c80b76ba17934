// Where a buffer lives. Host buffers must cost almost nothing: the region
// check answers for heap, stack and static buffers without the driver; the
// driver is asked only for other addresses, and only once it is loaded.
#pragma once

#include <cstdint>

#include "memory/device_memory.h"
#include "memory/host_regions.h"
#include "runtime/mpi_api.h"

namespace cumpi::memory {

// At MPI_Init.
void start_classifier();
PointerInfo query_device_memory(const void* pointer);

// The device memory's answer about the last device pointer this thread asked
// about, kept until the intercepted call that asked returns (in_engine
// forgets it): a device send or receive asks about its buffer two or three
// times, and each answer is a driver call. Only within one call is the
// answer certain: the buffer may be freed and another allocated there after.
struct DeviceAnswer {
  const void* pointer = nullptr;
  PointerInfo info;
};
extern thread_local DeviceAnswer t_device_answer __attribute__((tls_model("initial-exec")));
inline void forget_device_answer() { t_device_answer.pointer = nullptr; }
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

// The answer of buffer_on_device() beyond the pointer's own region.
bool buffer_on_device_slow(const void* pointer, int count, MPI_Datatype type) __attribute__((noinline));

// True when the bytes of `count` elements of `type` at `pointer` lie in
// device memory. The first byte the call touches decides, not the pointer,
// which may lie outside its data: MPI_BOTTOM with absolute displacements, a
// type whose data start away from its origin.
inline bool buffer_on_device(const void* pointer, int count, MPI_Datatype type) {
  return __builtin_expect(!known_host(pointer), 0) && buffer_on_device_slow(pointer, count, type);
}

// Where the bytes of `count` elements of `type` at `pointer` begin: the
// pointer to classify for them (the pointer itself when the type cannot be
// read; the MPI call then reports the bad type).
const void* first_byte_touched(const void* pointer, int count, MPI_Datatype type);

}  // namespace cumpi::memory
