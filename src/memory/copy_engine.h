// Copies between device, pinned host and IPC-mapped memory: streams, events,
// batches and the kernels that run them (UCX's "copy" half of a memory
// domain). The library variant supplies the implementation.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "memory/device_memory.h"
#include "memory/reduction.h"
#include "runtime/status.h"

namespace cumpi::memory {

// A copy in flight, started by CopyEngine::start_copy or queue_copy.
struct CopyTicket {
  void* event = nullptr;  // CUevent recorded after the copy; null once finished
  void* context = nullptr;
  void* batch = nullptr;  // a queued copy's batch (CopyBatches); null once finished
};

class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  // Synchronous copies between pageable or pinned host memory and the
  // device memory of `owner`.
  virtual Status copy_to_host(void* host, const void* device, std::size_t bytes, const PointerInfo& owner) = 0;
  virtual Status copy_to_device(void* device, const void* host, std::size_t bytes, const PointerInfo& owner) = 0;
  // Starts a copy between any two of device, pinned host and IPC-mapped
  // memory, on cumpi's stream of `context`.
  virtual Status start_copy(void* to, const void* from, std::size_t bytes, void* context, CopyTicket* ticket) = 0;
  // Queues a copy as start_copy would start it; the copies queued in one
  // context go to the device together at the next flush_copies(), or when
  // one of their tickets is polled or waited on. A copy that gains nothing
  // from a batch may start at once.
  // `both_on_device`: the caller knows both ends are device memory (spares
  // asking the driver).
  virtual void queue_copy(void* to, const void* from, std::size_t bytes, void* context, bool both_on_device,
                          CopyTicket* ticket) = 0;
  virtual void flush_copies() = 0;
  // Whether start_reduction can run in `context` (the reduction kernel
  // loads there); asked before a collective offers to reduce on the GPU.
  virtual bool reductions_available(void* context) = 0;
  // Starts `job` on device or IPC-mapped memory, on cumpi's stream of
  // `context`, after the copies started there before it; its ticket is
  // polled and waited for as a copy's.
  virtual Status start_reduction(const ReductionJob& job, void* context, CopyTicket* ticket) = 0;
  // Whether the backend has CUDA streams (the emulation backend has none):
  // what start_on_stream needs.
  virtual bool has_streams() const = 0;
  // Work of another library (NCCL) on cumpi's stream of `context`, with the
  // context current: `work(stream)` gets the CUstream and enqueues on it;
  // its ticket is polled and waited for as a copy's.
  using StreamWork = std::function<Status(void* stream)>;
  virtual Status start_on_stream(void* context, const StreamWork& work, CopyTicket* ticket) = 0;
  // Sets *finished once the copy completed (the ticket is spent then).
  virtual Status poll_copy(CopyTicket* ticket, bool* finished) = 0;
  // Blocks until the copy completed.
  virtual Status wait_copy(CopyTicket* ticket) = 0;
  // At MPI_Finalize: releases streams, events and kernels. Must survive a
  // cudaDeviceReset done by the application before.
  virtual void shutdown() = 0;
};

// This library variant's.
CopyEngine& copy_engine();

// The CUDA driver's, over `memory` (which it asks where a copy's ends lie).
std::unique_ptr<CopyEngine> make_cuda_copy_engine(DeviceMemory& memory);

}  // namespace cumpi::memory
