// Where device memory lives and what owns it: pointer queries, pinning and
// contexts (UCX's memory-type detection, its "md" half). The variant of the
// library supplies the implementation: the CUDA driver (libcumpi.so) or the
// host emulation (libcumpi_emu.so, tests only). Copies are copy_engine.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/status.h"

namespace cumpi::memory {

enum class MemoryKind {
  host,     // pageable or pinned host memory: MPI can read it
  device,   // device memory the CPU cannot touch: the engine's business
  managed,  // CUDA managed memory: host-accessible, passed through to MPI
};

// What is known of the allocation holding a pointer.
struct PointerInfo {
  MemoryKind kind = MemoryKind::host;
  void* context = nullptr;           // CUcontext owning the allocation
  unsigned long long buffer_id = 0;  // unique per allocation, never reused
  std::uintptr_t base = 0;           // the allocation's first byte
  std::size_t size = 0;              // the allocation's length
  int device = -1;                   // device ordinal
  // Device memory this process saw that the driver no longer backs (kind
  // device, no allocation): every use fails with MPI_ERR_BUFFER
  // (freed_device_ranges.h).
  bool freed = false;
};

// The answer for host memory.
inline constexpr PointerInfo kHostMemory{};

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual const char* name() const = 0;
  // False while no device memory can exist in this process (no CUDA driver
  // loaded). Must stay cheap when it answers false repeatedly.
  virtual bool device_memory_possible() = 0;
  virtual PointerInfo query(const void* pointer) = 0;
  // The calling thread's current context, if any (copies into host memory
  // through an IPC mapping run in it); null when there is none.
  virtual void* current_context() = 0;
  // Makes `context` the calling thread's current one (a thread of cumpi's
  // own that hands device memory to a library, as UCX's progress thread).
  virtual void make_current(void* context) { (void)context; }
  // Page-locks host memory for fast copies, in owner's context. Failure is
  // not fatal: the memory stays usable, copies are slower.
  virtual Status pin(void* host, std::size_t bytes, const PointerInfo& owner) = 0;
  virtual void unpin(void* host) = 0;
  // `bytes` of device memory of cumpi's own in owner's context (a
  // collective's intermediate results; device_scratch.h keeps them), and
  // their release. Never a new context.
  virtual Status allocate(std::size_t bytes, const PointerInfo& owner, void** device) = 0;
  virtual void free_allocation(void* device, const PointerInfo& owner) = 0;
  // The UUID of device ordinal `device` (the same GPU has the same UUID in
  // every process, whatever its CUDA_VISIBLE_DEVICES); false where it cannot
  // be had (the emulation backend has none).
  virtual bool device_uuid(int /*device*/, unsigned char /*uuid*/[16]) { return false; }
};

// This library variant's.
DeviceMemory& device_memory();

// The CUDA driver's (the production variant's; unit tests make their own).
std::unique_ptr<DeviceMemory> make_cuda_device_memory();

}  // namespace cumpi::memory
