// The device-memory backend compiled into this library variant: the CUDA
// driver (libcumpi.so) or the host emulation (libcumpi_emu.so, tests only).
// Everything above this interface is shared by both.
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

// What the backend knows of the allocation holding a pointer.
struct PointerInfo {
  MemoryKind kind = MemoryKind::host;
  void* context = nullptr;            // CUcontext owning the allocation
  unsigned long long buffer_id = 0;   // unique per allocation, never reused
  std::uintptr_t base = 0;            // the allocation's first byte
  std::size_t size = 0;               // the allocation's length
  int device = -1;                    // device ordinal
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // False while no device memory can exist in this process (no CUDA driver
  // loaded). Must stay cheap when it answers false repeatedly.
  virtual bool device_memory_possible() = 0;
  virtual PointerInfo query(const void* pointer) = 0;
  virtual Status copy_to_host(void* host, const void* device, std::size_t bytes, const PointerInfo& owner) = 0;
  virtual Status copy_to_device(void* device, const void* host, std::size_t bytes, const PointerInfo& owner) = 0;
  // Page-locks host memory for fast copies, in owner's context. Failure is
  // not fatal: the memory stays usable, copies are slower.
  virtual Status pin(void* host, std::size_t bytes, const PointerInfo& owner) = 0;
  virtual void unpin(void* host) = 0;
  // At MPI_Finalize: releases streams and other backend resources. Must
  // survive a cudaDeviceReset done by the application before.
  virtual void shutdown() = 0;
};

// The backend of this library variant.
Backend& backend();

// The CUDA driver backend (the production variant's).
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace cumpi::memory
