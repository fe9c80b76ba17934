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

// What a receiving process needs to map a sender's device allocation
// (DESIGN §4): a CUDA IPC handle of the allocation's base, or in the
// emulation backend the number of the sender's memfd.
struct IpcExport {
  unsigned char handle[64] = {};
  std::uint64_t buffer_id = 0;
  std::uint64_t allocation_bytes = 0;
  std::uint64_t offset = 0;  // of the exported pointer from the allocation's base
  unsigned char device_uuid[16] = {};
};

// A copy in flight, started by Backend::start_copy.
struct CopyTicket {
  void* event = nullptr;    // CUevent recorded after the copy; null once finished
  void* context = nullptr;
  void* batch = nullptr;    // a queued copy's batch (CopyBatches); null once finished
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
  // Exports the allocation holding `pointer` for another process. False when
  // it cannot be exported legacy-style (cudaMallocAsync pools, cuMemCreate):
  // the message then takes the staged pipeline.
  virtual bool export_ipc(const void* pointer, const PointerInfo& owner, IpcExport* out) = 0;
  // Maps a peer's exported allocation for copies into `destination`'s
  // context. An error means "decline": the peer's GPU is not visible here
  // or not peer-accessible, or the handle cannot be opened.
  virtual Status open_ipc(const IpcExport& exported, int sender_pid, const PointerInfo& destination,
                          void** mapped_base) = 0;
  virtual void close_ipc(void* mapped_base, void* context) = 0;
  // The calling thread's current context, if any (copies into host memory
  // through an IPC mapping run in it); null when there is none.
  virtual void* current_context() = 0;
  // True when the exported memory lives on the GPU of `context` and that GPU
  // is not shared through MPS: the two processes' work then takes turns on
  // it, a time slice per switch.
  virtual bool shares_gpu_without_mps(const IpcExport& exported, void* context) = 0;
  // Starts a copy between any two of device, pinned host and IPC-mapped
  // memory, on cumpi's stream of `context`.
  virtual Status start_copy(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket) = 0;
  // Queues a copy as start_copy would start it; the copies queued in one
  // context go to the device together at the next flush_copies(), or when
  // one of their tickets is polled or waited on. A copy that gains nothing
  // from a batch may start at once.
  // `both_on_device`: the caller knows both ends are device memory (spares
  // the backend asking the driver).
  virtual void queue_copy(void* to, const void* from, std::size_t bytes, void* context, bool both_on_device,
                          CopyTicket* ticket) = 0;
  virtual void flush_copies() = 0;
  // Sets *finished once the copy completed (the ticket is spent then).
  virtual Status poll_copy(CopyTicket* ticket, bool* finished) = 0;
  // Blocks until the copy completed.
  virtual Status wait_copy(CopyTicket* ticket) = 0;
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
