// Where a buffer lives. Host buffers must cost almost nothing: the region
// check answers for heap, stack and static buffers without the driver; the
// driver is asked only for other addresses, and only once it is loaded.
#pragma once

#include <cstdint>

#include "memory/backend.h"
#include "memory/host_regions.h"

namespace cumpi::memory {

// At MPI_Init.
void start_classifier();
// At MPI_Finalize, after the staging pool was cleared.
void stop_backend();
const char* backend_name();

PointerInfo query_backend(const void* pointer);

// The backend's answer about the last device pointer this thread asked
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
// The backend's answer to on_device(), out of line: the host-region check
// stays a few instructions with no call and no saved registers.
bool backend_says_device(const void* pointer) __attribute__((noinline));

// Host memory by construction, decided without a call: the first page (NULL,
// MPI_BOTTOM, Open MPI's MPI_IN_PLACE), the last address (MPICH's
// MPI_IN_PLACE), heap, stack, image. False is "look closer".
inline bool known_host(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  return address < 4096 || address == UINTPTR_MAX || in_known_host_region(pointer);
}

// Full answer, with the owning allocation for device memory.
inline PointerInfo classify(const void* pointer) {
  if (known_host(pointer) || in_host_region(pointer)) {
    return PointerInfo{};
  }
  return query_backend(pointer);
}

// True when `pointer` is device memory that MPI cannot touch.
inline bool on_device(const void* pointer) {
  return __builtin_expect(!known_host(pointer), 0) && backend_says_device(pointer);
}

}  // namespace cumpi::memory
