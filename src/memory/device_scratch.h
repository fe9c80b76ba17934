// Device memory of cumpi's own for the intermediate results of collectives
// (a Reduce's partial result at a node's representative, coll/hierarchy.cc),
// allocated in the context that owns the user's buffer, never a new one.
//
// Blocks are kept for reuse: allocating per call would cost every call
// cuMemAlloc, and cuMemFree waits for the whole device. At most one free
// block per context is kept, up to CUMPI_DEVICE_SCRATCH_LIMIT bytes; a larger
// one serves its call and is freed after. A kept block is checked before
// reuse (its buffer id, 45 ns): an application that reset its device took
// the block with its context. Released at MPI_Finalize.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "memory/device_memory.h"
#include "runtime/status.h"

namespace cumpi::memory {

class DeviceScratch {
 public:
  DeviceScratch(DeviceMemory& memory, std::size_t keep_limit) : memory_(memory), keep_limit_(keep_limit) {}
  ~DeviceScratch() { clear(); }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  // At least `bytes` of device memory in owner's context, this caller's
  // until it gives it back.
  Status acquire(std::size_t bytes, const PointerInfo& owner, void** device);
  void give_back(void* device);
  // Frees every block not in use.
  void clear();

  std::size_t kept_bytes() const;
  std::size_t allocations() const;  // made so far: reuse keeps this from growing

 private:
  struct Block {
    void* device = nullptr;
    std::size_t bytes = 0;
    PointerInfo owner;               // its context, and its own buffer id
    unsigned long long buffer_id = 0;
    bool in_use = false;
  };
  bool still_there(const Block& block);
  void free_block(const Block& block);

  DeviceMemory& memory_;
  std::size_t keep_limit_;
  mutable std::mutex mutex_;
  std::vector<Block> blocks_;
  std::size_t allocations_ = 0;
};

// The process's, over this library variant's device memory.
DeviceScratch& device_scratch();

// A block of device_scratch() held for one call.
class ScratchLease {
 public:
  ScratchLease() = default;
  ~ScratchLease() {
    if (device_ != nullptr) device_scratch().give_back(device_);
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Status acquire(std::size_t bytes, const PointerInfo& owner) {
    return device_scratch().acquire(bytes, owner, &device_);
  }
  void* device() const { return device_; }

 private:
  void* device_ = nullptr;
};

}  // namespace cumpi::memory
