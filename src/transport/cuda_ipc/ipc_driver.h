// The CUDA IPC primitives (DESIGN §4): exporting an allocation for another
// process, mapping a peer's, and the facts that decide whether mapping pays.
// The library variant supplies the implementation: the CUDA driver's, or
// the host emulation's (a memfd opened through /proc).
#pragma once

#include <cstdint>

#include "memory/device_memory.h"
#include "runtime/status.h"

namespace cumpi::transport {

// What a receiving process needs to map a sender's device allocation: a
// CUDA IPC handle of the allocation's base, or in the emulation the number
// of the sender's memfd.
struct IpcExport {
  unsigned char handle[64] = {};
  std::uint64_t buffer_id = 0;
  std::uint64_t allocation_bytes = 0;
  std::uint64_t offset = 0;  // of the exported pointer from the allocation's base
  unsigned char device_uuid[16] = {};
};

class IpcDriver {
 public:
  virtual ~IpcDriver() = default;
  // Exports the allocation holding `pointer` for another process. False when
  // it cannot be exported legacy-style (cudaMallocAsync pools, cuMemCreate):
  // the message then takes another transport.
  virtual bool export_ipc(const void* pointer, const memory::PointerInfo& owner, IpcExport* out) = 0;
  // Maps a peer's exported allocation for copies into `destination`'s
  // context. An error means "decline": the peer's GPU is not visible here
  // or not peer-accessible, or the handle cannot be opened.
  virtual Status open_ipc(const IpcExport& exported, int sender_pid, const memory::PointerInfo& destination,
                          void** mapped_base) = 0;
  virtual void close_ipc(void* mapped_base, void* context) = 0;
  // True when the exported memory lives on the GPU of `context` and that GPU
  // is not shared through MPS: the two processes' work then takes turns on
  // it, a time slice per switch.
  virtual bool shares_gpu_without_mps(const IpcExport& exported, void* context) = 0;
};

// This library variant's: cuda_ipc_driver.cc or emulated_ipc_driver.cc.
IpcDriver& ipc_driver();

}  // namespace cumpi::transport
